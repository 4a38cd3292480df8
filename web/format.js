// Number formats of the dashboard, in a module of their own so that tests can run them outside a browser.

const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 })
const SMALL = new Intl.NumberFormat('en', { maximumSignificantDigits: 3 })

/**
 * An axis tick of a count or rate, short enough for any axis from 1 to 10^9 and beyond: 950, 1.5K, 200K,
 * 3M, 1B; values below 1 keep three significant digits (0.25), and 10^12 and more are written as 1e12.
 */
export function fmtAxisCount(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return ''
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (a >= 1e12) return v.toExponential(0).replace('+', '')
  return a < 1000 ? SMALL.format(v) : COMPACT.format(v)
}
