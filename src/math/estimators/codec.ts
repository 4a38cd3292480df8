/**
 * The stored form of an EstimatorState: a flat run of float64 values, big-endian (the byte order of
 * Postgres's float8send, so migrations/0006 can write it in SQL). A page row is rewritten by every
 * ingest batch that touches it, and as jsonb the state cost Postgres more than the rest of the row
 * together (every number converted to numeric); as bytes it is about half the size and is copied as is.
 *
 * Layout (every slot one float64; NaN stands for null):
 *   version, intervals, changes, observedDays, saChangesPerDay, unchangedDays,
 *   lastModified.crawls, lastModified.changes, lastModified.exposureDays,
 *   k, k class log-probabilities,
 *   segment: intervals (NaN: no segment stored, the whole history is the segment), changes,
 *            observedDays, unchangedDays, cusumUp, cusumDown, changesPerDay, restarts,
 *   then three histograms (changed, unchanged, segment's changed), each as its bin count b and
 *   b × (bucket, count, sumDays, sumSquaresDays).
 * Decoding goes through readEstimatorState, so bytes that are short or malformed give empty fields,
 * never NaN further on.
 */
import type { HistogramBin } from './histogram.ts'
import { readEstimatorState, type EstimatorState } from './state.ts'

export const STATE_LAYOUT_VERSION = 1

const nullable = (x: number | null): number => (x === null ? Number.NaN : x)

function pushHistogram(out: number[], bins: readonly HistogramBin[]): void {
  out.push(bins.length)
  for (const bin of bins) out.push(bin[0], bin[1], bin[2], bin[3])
}

export function encodeEstimatorState(state: EstimatorState): Uint8Array {
  const s = readEstimatorState(state)
  const g = s.segment
  const values: number[] = [
    STATE_LAYOUT_VERSION,
    s.intervals,
    s.changes,
    s.observedDays,
    nullable(s.saChangesPerDay),
    s.unchangedDays,
    s.lastModified.crawls,
    s.lastModified.changes,
    s.lastModified.exposureDays,
    s.classLogProbabilities.length,
    ...s.classLogProbabilities,
    g.intervals,
    g.changes,
    g.observedDays,
    g.unchangedDays,
    g.cusumUp,
    g.cusumDown,
    nullable(g.changesPerDay),
    g.restarts,
  ]
  pushHistogram(values, s.changedHistogram)
  pushHistogram(values, s.unchangedHistogram)
  pushHistogram(values, g.changedHistogram)
  const bytes = new Uint8Array(values.length * 8)
  const view = new DataView(bytes.buffer)
  values.forEach((v, i) => view.setFloat64(i * 8, v, false))
  return bytes
}

/** The state stored as `bytes`; null when there are none (a page never crawled twice). */
export function decodeEstimatorState(bytes: Uint8Array | null): EstimatorState | null {
  if (bytes === null || bytes.length < 8) return null
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const count = Math.floor(bytes.length / 8)
  let at = 0
  const next = (): number => (at < count ? view.getFloat64(8 * at++, false) : Number.NaN)
  const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x)
  const histogram = (): number[][] => {
    const b = next()
    const bins: number[][] = []
    for (let i = 0; i < b && at < count; i++) bins.push([next(), next(), next(), next()])
    return bins
  }
  if (next() !== STATE_LAYOUT_VERSION) return null
  const intervals = next()
  const changes = next()
  const observedDays = next()
  const saChangesPerDay = orNull(next())
  const unchangedDays = next()
  const lastModified = { crawls: next(), changes: next(), exposureDays: next() }
  const k = next()
  const classLogProbabilities: number[] = []
  for (let i = 0; i < k && at < count; i++) classLogProbabilities.push(next())
  const segmentIntervals = next()
  const segment = {
    intervals: segmentIntervals,
    changes: next(),
    observedDays: next(),
    unchangedDays: next(),
    cusumUp: next(),
    cusumDown: next(),
    changesPerDay: orNull(next()),
    restarts: next(),
  }
  const changedHistogram = histogram()
  const unchangedHistogram = histogram()
  const segmentHistogram = histogram()
  return readEstimatorState({
    v: 1,
    intervals,
    changes,
    observedDays,
    saChangesPerDay,
    unchangedDays,
    changedHistogram,
    unchangedHistogram,
    lastModified,
    classLogProbabilities,
    ...(Number.isNaN(segmentIntervals) ? {} : { segment: { ...segment, changedHistogram: segmentHistogram } }),
  })
}
