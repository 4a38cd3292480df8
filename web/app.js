// recrawl dashboard: plain ES module, no build step. Reads GET /v1/stats every REFRESH_MS and the
// page endpoints on demand; draws with uPlot (served from the uplot package at /vendor/uplot/).

import { fmtAxisCount } from './format.js'

const REFRESH_MS = 10_000
const KEY_STORAGE = 'recrawl.apiKey'
const COLORS = {
  blue: '#2f6fdf',
  orange: '#e07b24',
  green: '#2f9e5b',
  red: '#d1495b',
  grey: '#8a8f98',
  purple: '#7b5ea7',
  brown: '#8c564b',
  // The hourly crawl line's own colour: red is the 5xx class's in the next chart.
  teal: '#1b9aaa',
}

const STATUS_CLASS_COLORS = {
  '2xx': COLORS.green,
  '3xx': COLORS.blue,
  '4xx': COLORS.orange,
  '5xx': COLORS.red,
  error: COLORS.brown,
  none: COLORS.grey,
  '1xx': COLORS.purple,
}
const STATUS_CLASS_LABELS = { error: 'no answer (timeout, DNS, …)', none: 'no status' }
const HOUR_S = 3600

const $ = (id) => document.getElementById(id)
/** The uPlot instance of each drawn chart, by container id. */
const charts = {}

/**
 * What tests (and curious operators) can read: per chart, how many data points it holds and the x
 * range it was given; `plots` are the uPlot instances themselves (scales, series, data).
 */
const dashboard = { refreshes: 0, charts: {}, plots: charts, errors: [], page: null }
window.recrawlDashboard = dashboard

// ---------------------------------------------------------------- API

function apiKey() {
  return localStorage.getItem(KEY_STORAGE) || ''
}

async function api(path, body) {
  const headers = { accept: 'application/json' }
  const key = apiKey()
  if (key) headers.authorization = `Bearer ${key}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) }
  const res = await fetch(path, init)
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`
    try {
      const body = await res.json()
      if (body.detail) detail = `${res.status}: ${body.detail}`
    } catch {
      // Not problem+json: the status line is all there is to say.
    }
    const err = new Error(detail)
    err.status = res.status
    throw err
  }
  return res.json()
}

// ---------------------------------------------------------------- formatting

function fmtNum(v, digits = 3) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–'
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (a >= 1e6 || a < 1e-3) return v.toExponential(digits - 1)
  if (Number.isInteger(v)) return v.toLocaleString('en')
  return Number(v.toPrecision(digits)).toLocaleString('en', { maximumFractionDigits: 6 })
}

function fmtPct(v) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : `${(v * 100).toFixed(1)} %`
}

function fmtDuration(seconds) {
  if (!Number.isFinite(seconds)) return '–'
  if (seconds < 60) return `${Math.round(seconds)} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86_400).toFixed(1)} d`
}

function fmtTime(iso) {
  if (!iso) return '–'
  const d = new Date(iso)
  return d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
}

const secs = (iso) => Date.parse(iso) / 1000

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v
    else if (k === 'style') e.setAttribute('style', v)
    else e.setAttribute(k, v)
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return e
}

function fillTable(id, rows) {
  const body = $(id).querySelector('tbody')
  body.replaceChildren(...rows)
  $(id).dataset.rows = String(rows.length)
}

// ---------------------------------------------------------------- charts

/**
 * Joins several [x, y] lists on the union of their x values (uPlot needs one shared x array). An x
 * a list does not have becomes undefined, which uPlot bridges; a null a list carries (a real gap in
 * its data) stays null, which breaks the line.
 */
function joinOnX(lists) {
  const xs = [...new Set(lists.flatMap((l) => l.map((p) => p[0])))].sort((a, b) => a - b)
  const index = new Map(xs.map((x, i) => [x, i]))
  const ys = lists.map((l) => {
    const y = new Array(xs.length).fill(undefined)
    for (const [x, v] of l) y[index.get(x)] = v
    return y
  })
  return [xs, ...ys]
}

const isValue = (v) => v !== null && v !== undefined && Number.isFinite(v)

function countPoints(data) {
  let n = 0
  for (let s = 1; s < data.length; s++) for (const v of data[s]) if (isValue(v)) n++
  return n
}

/** (Re)draws a chart into its container and records how many points it holds and its x range. */
function draw(id, opts, data, emptyText = 'no data yet') {
  const target = $(id)
  const points = countPoints(data)
  target.dataset.points = String(points)
  const xRange = typeof opts.scales?.x?.range === 'function' ? opts.scales.x.range() : null
  dashboard.charts[id] = { points, series: data.length - 1, xRange }
  if (charts[id]) charts[id].destroy()
  target.replaceChildren()
  if (points === 0) {
    target.append(el('p', { class: 'empty' }, emptyText))
    delete charts[id]
    return
  }
  const width = Math.max(280, target.clientWidth || 480)
  charts[id] = new uPlot({ width, height: 220, legend: { live: true }, ...opts }, data, target)
}

/** Times on the axes and in the legends are UTC, like every other time on the page. */
const utc = (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC')

/**
 * Options of a time x axis over [fromS, toS] exactly. Time series span the selected window (ending
 * at the service's clock, which a simulated clock puts far from the browser's) and the page timeline
 * spans its own data, never an automatic range: uPlot's for a single value runs for years.
 */
function timeX(fromS, toS) {
  return { time: true, range: () => [fromS, toS] }
}

/** Tick labels of a UTC time axis: hh:mm, with the date (MM-DD) at the first tick of each day; dates only for day steps. */
function utcTicks(_u, ticks, _axis, _space, incr) {
  let previousDay = null
  return ticks.map((t) => {
    const stamp = new Date(t * 1000).toISOString()
    const day = stamp.slice(5, 10)
    const label = incr >= 86_400 ? day : day !== previousDay ? `${stamp.slice(11, 16)}\n${day}` : stamp.slice(11, 16)
    previousDay = day
    return label
  })
}

/** The x series and axis of a time chart: UTC like every other time on the page. */
const timeSeries = {
  label: 'time (UTC)',
  value: (_u, v) => (v === null || v === undefined ? '–' : fmtTime(new Date(v * 1000).toISOString())),
}
const timeAxis = { values: utcTicks }
/** A y axis of counts or rates: compact ticks (1.5K, 200K, 3M, 1B) that fit its width at any magnitude. */
const countAxis = (extra = {}) => ({ values: (_u, ticks) => ticks.map(fmtAxisCount), ...extra })

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above v (v > 0). */
function niceCeil(v) {
  const decade = 10 ** Math.floor(Math.log10(v))
  return [1, 2, 2.5, 5, 10].map((m) => m * decade).find((c) => c >= v * (1 - 1e-12))
}

/** A y range from 0 to a round number a little above the largest value (at least `minMax`). */
const fromZero =
  (minMax = 1) =>
  (_u, _min, max) => [0, niceCeil(Math.max(minMax, Number.isFinite(max) ? max * 1.05 : minMax))]

const MARKER_SPACING_PX = 6
const nonNullCount = (ys) => ys.reduce((n, v) => n + (isValue(v) ? 1 : 0), 0)

/**
 * Point markers: on every point while the series is sparse enough for the plot's width (so one
 * sample or a few are always visible); otherwise only on isolated points, which a line cannot show.
 */
const markers = {
  show: (u, si) => nonNullCount(u.data[si]) * MARKER_SPACING_PX * devicePixelRatio <= u.bbox.width,
  filter: (u, si, show) => {
    if (show) return null
    const ys = u.data[si]
    const isolated = []
    let prev = null
    for (let i = 0; i < ys.length; i++) {
      if (ys[i] === undefined) continue
      if (isValue(ys[i]) && !isValue(prev)) {
        let j = i + 1
        while (j < ys.length && ys[j] === undefined) j++
        if (j >= ys.length || !isValue(ys[j])) isolated.push(i)
      }
      prev = ys[i]
    }
    return isolated
  },
  size: 6,
}

/**
 * A line with markers. Charts give their series decreasing `markerSize`s, so that series which meet
 * at a point (budget and planned after a run, a single sample on two axes) still show every marker.
 */
const line = (label, stroke, { markerSize = markers.size, ...extra } = {}) => ({
  label,
  stroke,
  width: 2,
  points: { ...markers, size: markerSize, stroke },
  ...extra,
})
const dots = (label, stroke, extra = {}) => ({
  label,
  stroke,
  fill: stroke,
  paths: () => null,
  points: { show: true, size: 7, fill: stroke },
  ...extra,
})
/** A per-hour count: the value holds for its hour (the last one up to the window's end). */
const hourly = (label, stroke, extra = {}) => ({
  ...line(label, stroke),
  paths: uPlot.paths.stepped({ align: 1, extend: true }),
  points: { show: false },
  ...extra,
})

/**
 * [x, row] pairs of the stored samples, with a null row between two samples further apart than
 * 2.5 buckets, so the lines break where the service took no sample (it was down, or nobody asked)
 * instead of drawing a straight line through hours without data.
 */
function samplesWithGaps(series) {
  const out = []
  let prev = null
  for (const p of series.points) {
    const x = secs(p.at)
    if (prev !== null && x - prev > 2.5 * series.bucketSeconds) out.push([(x + prev) / 2, null])
    out.push([x, p])
    prev = x
  }
  return out
}

/** Maps the sample rows to one [x, y] list (null rows stay null: gaps). */
const sampleList = (rows, value) => rows.map(([x, p]) => [x, p === null ? null : value(p)])

/** The x of an hour bucket: its start, or the window's start for the hour the window begins in. */
const hourX = (a, fromS) => Math.max(secs(a.hourStart), fromS)

function histogramChart(id, noteId, histogram, unit) {
  const centres = histogram.counts.map(
    (_, i) => (Math.log10(histogram.edgesPerDay[i]) + Math.log10(histogram.edgesPerDay[i + 1])) / 2,
  )
  const counts = histogram.counts.map((c) => c)
  const lo = Math.log10(histogram.edgesPerDay[0])
  const hi = Math.log10(histogram.edgesPerDay[histogram.edgesPerDay.length - 1])
  const decades = []
  for (let d = Math.ceil(lo); d <= hi; d++) decades.push(d)
  const anyPages = counts.some((c) => c > 0)
  draw(
    id,
    {
      scales: { x: { time: false, range: [lo, hi] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        { splits: () => decades, values: (_u, ticks) => ticks.map((t) => fmtNum(10 ** t)), label: unit },
        countAxis({ label: 'pages' }),
      ],
      series: [
        { label: unit, value: (_u, v) => (v === null ? '–' : `≈ ${fmtNum(10 ** v)}`) },
        {
          label: 'pages',
          stroke: COLORS.blue,
          fill: 'rgba(47,111,223,0.35)',
          paths: uPlot.paths.bars({ size: [0.9, 100] }),
          points: { show: false },
        },
      ],
    },
    [centres, anyPages ? counts : counts.map(() => null)],
  )
  const extra = []
  if (histogram.below) extra.push(`${histogram.below} below ${fmtNum(histogram.edgesPerDay[0])}`)
  if (histogram.above)
    extra.push(`${histogram.above} at or above ${fmtNum(histogram.edgesPerDay[histogram.edgesPerDay.length - 1])}`)
  if (histogram.unknown) extra.push(`${histogram.unknown} without a value`)
  $(noteId).textContent = extra.join(' · ')
}

// ---------------------------------------------------------------- overview

/** Failed fetches of one hour: statuses outside 200…399 and fetches without an HTTP answer (no content seen). */
const failedFetches = (a) =>
  a.fetchesByStatusClass['1xx'] +
  a.fetchesByStatusClass['4xx'] +
  a.fetchesByStatusClass['5xx'] +
  a.fetchesByStatusClass.error

function renderTiles(s) {
  const failed = s.crawlActivity.reduce((n, a) => n + failedFetches(a), 0)
  const crawled = s.crawlActivity.reduce((n, a) => n + a.crawls, 0)
  const tiles = [
    ['pages', fmtNum(s.pages)],
    ['overdue pages', fmtNum(s.pagesOverdue)],
    ['oldest overdue', s.pagesOverdue ? fmtDuration(s.oldestOverdueAgeSeconds) : '–'],
    ['expected freshness', fmtPct(s.expectedFreshness)],
    ['budget / day', fmtNum(s.budgetCrawlsPerDay)],
    ['planned / day', fmtNum(s.plannedCrawlsPerDay)],
    ['crawled / day (last hour)', fmtNum(s.crawlsPerDayLastHour)],
    ['leased pages', fmtNum(s.pagesLeased)],
    // Sitemap items are scheduled like pages but are no pages: counted apart, shown only when there are some.
    ...(s.sitemaps && s.sitemaps.items > 0
      ? [['sitemaps · overdue', `${fmtNum(s.sitemaps.items)} · ${fmtNum(s.sitemaps.overdue)}`]]
      : []),
    ['λ', fmtNum(s.optimizer.lambda)],
    [
      `failed fetches (${fmtDuration(s.windowHours * HOUR_S)})`,
      crawled ? `${fmtNum(failed)} · ${fmtPct(failed / crawled)}` : '–',
    ],
  ]
  const a = s.handOutAllowance
  const allowance = el(
    'div',
    {
      class: a.limiting ? 'tile limited-tile' : 'tile',
      id: 'allowance-tile',
      title: `tokens left ${fmtNum(a.tokens)} of ${fmtNum(a.capacity)}, reserve ${fmtNum(a.reserve)}, refilled at ${fmtNum(a.perDay)} a day`,
    },
    el('span', { class: 'v' }, `${fmtNum(Math.floor(a.tokens))} / ${fmtNum(Math.floor(a.capacity))}`),
    el(
      'span',
      { class: 'k' },
      a.limiting
        ? 'hand-out allowance: LIMITING (fewer tokens than overdue pages)'
        : 'hand-out allowance: not limiting',
    ),
  )
  $('tiles').replaceChildren(
    ...tiles.map(([k, v]) =>
      el('div', { class: 'tile' }, el('span', { class: 'v' }, v), el('span', { class: 'k' }, k)),
    ),
    allowance,
  )
}

function renderOverview(s) {
  renderTiles(s)
  const fromS = secs(s.windowStart)
  const toS = secs(s.windowEnd)
  const x = timeX(fromS, toS)
  const inWindow = (t) => t > fromS && t <= toS
  const samples = samplesWithGaps(s.series)
  const runs = [...s.optimizerRuns].reverse().filter((r) => inWindow(secs(r.startedAt)))
  const empty = `nothing in the last ${fmtDuration(s.windowHours * HOUR_S)}`
  /** Whether an hour of crawl activity ends after the window does (the current, unfinished hour). */
  const isPartialHour = (a) => secs(a.hourStart) + HOUR_S > toS
  $('window-note').textContent = `${fmtTime(s.windowStart)} – ${fmtTime(s.windowEnd)} (service clock)`

  draw(
    'chart-freshness',
    {
      tzDate: utc,
      scales: { x, y: { range: [0, 1] } },
      axes: [timeAxis, { values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)} %`) }],
      series: [
        timeSeries,
        line('sampled', COLORS.green, { value: (_u, v) => fmtPct(v) }),
        dots('optimiser run', COLORS.purple, { value: (_u, v) => fmtPct(v) }),
      ],
    },
    joinOnX([
      sampleList(samples, (p) => p.expectedFreshness),
      // Only runs that solved for pages: a run on an empty database reports a vacuous 100 %.
      runs
        .filter((r) => r.pages > 0 && r.expectedFreshness !== null)
        .map((r) => [secs(r.startedAt), r.expectedFreshness]),
    ]),
    empty,
  )

  draw(
    'chart-budget',
    {
      tzDate: utc,
      scales: { x, y: { range: fromZero() } },
      axes: [timeAxis, countAxis()],
      series: [
        timeSeries,
        // Wide and drawn first: where the planned rates spend the whole budget, it frames their line.
        line('budget', COLORS.grey, { width: 5, dash: [8, 4], markerSize: 11 }),
        line('planned Σρ', COLORS.blue, { markerSize: 7 }),
        line('crawled (last hour × 24)', COLORS.orange, { markerSize: 5 }),
        hourly('crawled per hour × 24', COLORS.teal),
        hourly('current hour so far (partial, per elapsed time)', COLORS.teal, { dash: [4, 4] }),
      ],
    },
    joinOnX([
      sampleList(samples, (p) => p.budgetCrawlsPerDay),
      sampleList(samples, (p) => p.plannedCrawlsPerDay),
      sampleList(samples, (p) => p.crawlsPerDayLastHour),
      // The hour the window ends in is cut short: a full-hour line would show it as a drop. Its crawls are
      // drawn apart, dashed, as a rate over the time elapsed in it.
      s.crawlActivity.map((a) => [hourX(a, fromS), isPartialHour(a) ? null : a.crawls * 24]),
      s.crawlActivity.filter(isPartialHour).map((a) => {
        const elapsedS = toS - hourX(a, fromS)
        return [hourX(a, fromS), elapsedS > 0 ? (a.crawls * HOUR_S * 24) / elapsedS : null]
      }),
    ]),
    empty,
  )

  draw(
    'chart-overdue',
    {
      tzDate: utc,
      scales: { x, y: { range: fromZero() }, h: { range: fromZero() } },
      axes: [
        timeAxis,
        countAxis({ label: 'pages' }),
        { scale: 'h', side: 1, label: 'oldest (h)', grid: { show: false } },
      ],
      series: [
        timeSeries,
        line('overdue pages', COLORS.red, { markerSize: 9 }),
        line('oldest overdue (h)', COLORS.grey, { scale: 'h', markerSize: 5 }),
      ],
    },
    joinOnX([sampleList(samples, (p) => p.pagesOverdue), sampleList(samples, (p) => p.oldestOverdueAgeSeconds / 3600)]),
    empty,
  )

  // Every class with a crawl in the window, in a fixed order; 2xx always, so the chart shows the crawls too.
  const classes = ['2xx', '3xx', '4xx', '5xx', 'error', 'none', '1xx'].filter(
    (c) => c === '2xx' || s.crawlActivity.some((a) => a.fetchesByStatusClass[c] > 0),
  )
  const classLabel = (c) => STATUS_CLASS_LABELS[c] ?? c
  // The hour the window ends in is cut short: drawn as a full hour, its count would read as a drop. Each class's
  // count in it is drawn apart, dashed, at its pace so far: per hour of the time elapsed in it (a minute at least).
  const current = s.crawlActivity.find(isPartialHour)
  const currentX = current ? hourX(current, fromS) : null
  const currentS = current ? Math.max(toS - currentX, 60) : null
  draw(
    'chart-fetches',
    {
      tzDate: utc,
      scales: { x, y: { range: fromZero() } },
      axes: [timeAxis, countAxis({ label: 'crawls per hour' })],
      series: [
        timeSeries,
        ...classes.map((c) => hourly(classLabel(c), STATUS_CLASS_COLORS[c])),
        ...(current
          ? classes.map((c) =>
              hourly(`${classLabel(c)}: current hour so far (partial, per elapsed time)`, STATUS_CLASS_COLORS[c], {
                dash: [4, 4],
              }),
            )
          : []),
      ],
    },
    joinOnX([
      ...classes.map((c) =>
        s.crawlActivity.map((a) => [hourX(a, fromS), isPartialHour(a) ? null : a.fetchesByStatusClass[c]]),
      ),
      ...(current ? classes.map((c) => [[currentX, (current.fetchesByStatusClass[c] * HOUR_S) / currentS]]) : []),
    ]),
    empty,
  )

  histogramChart('chart-change-rates', 'change-rates-note', s.changeRateHistogram, 'changes/day')
  histogramChart('chart-crawl-rates', 'crawl-rates-note', s.crawlRateHistogram, 'crawls/day')

  fillTable(
    'runs-table',
    s.optimizerRuns.map((r) =>
      el(
        'tr',
        {},
        el('td', {}, fmtTime(r.startedAt)),
        el('td', {}, r.trigger),
        el('td', {}, r.objective),
        el('td', {}, fmtNum(r.pages)),
        el('td', {}, fmtNum(r.pagesCrawled)),
        el('td', {}, fmtNum(r.pagesRetimed)),
        el('td', {}, fmtNum(r.budgetCrawlsPerDay)),
        el('td', {}, fmtNum(r.lambda)),
        el('td', {}, fmtPct(r.expectedFreshness)),
        el('td', {}, `${fmtNum(r.durationMs)} ms`),
      ),
    ),
  )
  fillTable(
    'hosts-table',
    s.topOverdueHosts.map((h) =>
      el(
        'tr',
        {},
        el('td', {}, h.host),
        el('td', {}, fmtNum(h.pagesOverdue)),
        el('td', {}, fmtDuration(h.oldestOverdueAgeSeconds)),
      ),
    ),
  )
  fillTable(
    'failures-table',
    s.fetchFailures.map((f) =>
      el(
        'tr',
        { class: f.httpStatus === null || f.httpStatus >= 500 ? 'bad' : '' },
        el('td', {}, f.host),
        el('td', {}, f.httpStatus === null ? f.fetchError : String(f.httpStatus)),
        el('td', {}, fmtNum(f.fetches)),
        el('td', {}, fmtNum(f.pages)),
        el('td', {}, fmtTime(f.lastCrawledAt)),
      ),
    ),
  )
  $('failures-note').textContent = s.fetchFailures.length === 0 ? `no failed fetch reported in the window` : ''
}

async function refresh() {
  const hours = $('window-hours').value
  try {
    const stats = await api(`/v1/stats?hours=${hours}`)
    renderOverview(stats)
    dashboard.refreshes++
    dashboard.stats = stats
    $('status').textContent = `snapshot ${fmtTime(stats.takenAt)} · ${stats.schedule} schedule`
    $('status').className = 'status ok'
  } catch (err) {
    dashboard.errors.push(String(err.message))
    $('status').textContent =
      err.status === 401 || err.status === 403
        ? `${err.message} — enter an API key with the reader role`
        : `error: ${err.message}`
    $('status').className = 'status error'
  }
}

async function fillPageSuggestions() {
  try {
    const { pages } = await api('/v1/pages?limit=50')
    $('page-urls').replaceChildren(...pages.map((p) => el('option', { value: p.url })))
  } catch {
    // Suggestions are a convenience: without them the URL box still takes any URL.
  }
}

// ---------------------------------------------------------------- host view

const HOSTS_PER_VIEW = 25
/** The host view's sort, filter and position; `cursors[i]` opens view page i (null: the first). */
const hostView = { sort: 'crawlsLastDay', order: 'desc', prefix: '', cursors: [null], index: 0 }

function hostFailuresText(f) {
  const kinds = [
    ['timeout', f.timeout],
    ['DNS', f.dns],
    ['connection', f.connection],
    ['TLS', f.tls],
    ['other error', f.other],
    ['4xx', f.http4xx],
    ['429', f.http429],
    ['5xx', f.http5xx],
    ['1xx', f.httpOther],
  ].filter(([, n]) => n > 0)
  if (f.total === 0) return '0'
  return `${fmtNum(f.total)} (${kinds.map(([k, n]) => `${k} ${fmtNum(n)}`).join(', ')})`
}

function hostRow(h) {
  const st = h.pagesByStatus
  const capped = h.capCrawlsPerDay !== null && h.plannedCrawlsPerDay >= 0.99 * h.capCrawlsPerDay
  const planned = el('td', { class: 'num' }, fmtNum(h.plannedCrawlsPerDay))
  if (capped) planned.append(' ', el('span', { class: 'limited' }, 'capped'))
  const backoff = h.blockedUntil
    ? el('span', { class: 'blocked' }, `blocked until ${fmtTime(h.blockedUntil)} (${h.blockIncidents} incidents)`)
    : h.throttleDelaySeconds
      ? `throttled ${fmtDuration(h.throttleDelaySeconds)}`
      : '–'
  const tr = el(
    'tr',
    { 'data-host': h.host, class: capped || h.blockedUntil ? 'bad' : '' },
    el('td', {}, h.host),
    el('td', { class: 'num' }, fmtNum(h.pages)),
    el(
      'td',
      {},
      `${fmtNum(st.active)} · ${fmtNum(st.failing)} · ${fmtNum(st.gone)} · ${fmtNum(st.redirected)} · ${fmtNum(st.noisy)}`,
    ),
    el('td', { class: 'num' }, fmtNum(h.pagesOverdue)),
    planned,
    el('td', { class: 'num' }, h.capCrawlsPerDay === null ? 'none' : fmtNum(h.capCrawlsPerDay)),
    el('td', {}, h.paceSeconds > 0 ? fmtDuration(h.paceSeconds) : '–'),
    el('td', {}, backoff),
    el('td', { class: 'num' }, fmtNum(h.crawlsLastDay)),
    el('td', {}, hostFailuresText(h.failuresLastDay)),
    el('td', { class: 'num' }, fmtPct(h.expectedFreshness)),
  )
  return tr
}

async function loadHosts() {
  const q = new URLSearchParams({ sort: hostView.sort, order: hostView.order, limit: String(HOSTS_PER_VIEW) })
  if (hostView.prefix) q.set('hostPrefix', hostView.prefix)
  const cursor = hostView.cursors[hostView.index]
  if (cursor) q.set('cursor', cursor)
  try {
    const res = await api(`/v1/host-overview?${q}`)
    $('hosts-error').textContent = ''
    fillTable('host-overview-table', res.hosts.map(hostRow))
    hostView.cursors[hostView.index + 1] = res.nextCursor
    const first = hostView.index * HOSTS_PER_VIEW
    $('hosts-range').textContent =
      res.total === 0
        ? 'no host has pages'
        : `${fmtNum(first + 1)}–${fmtNum(first + res.hosts.length)} of ${fmtNum(res.total)} hosts`
    $('hosts-prev').disabled = hostView.index === 0
    $('hosts-next').disabled = res.nextCursor === null
    for (const th of $('host-overview-table').querySelectorAll('th[data-sort]')) {
      if (th.dataset.sort === hostView.sort)
        th.setAttribute('aria-sort', hostView.order === 'asc' ? 'ascending' : 'descending')
      else th.removeAttribute('aria-sort')
    }
    dashboard.hosts = res
    dashboard.hostLoads = (dashboard.hostLoads ?? 0) + 1
  } catch (err) {
    $('hosts-error').textContent = err.message
  }
}

/** Back to the first view page (after a change of sort or filter). */
function reloadHosts() {
  hostView.cursors = [null]
  hostView.index = 0
  return loadHosts()
}

// ---------------------------------------------------------------- change signals

const SIGNAL_HOSTS_PER_VIEW = 25
/** The chosen source's host list: its filter and position; `cursors[i]` opens view page i (null: the first). */
const signalView = { source: null, prefix: '', cursors: [null], index: 0 }

const fmtShare = (v) => (Number.isFinite(v) ? v.toFixed(2) : '–')
/** For a page whose every interval changed the estimate is not the posterior mean (docs/math.md 1.12): say both. */
function heldNote(posterior) {
  const mean = posterior.meanChangesPerDay
  return Math.abs(mean - posterior.changesPerDay) > 1e-3 * mean
    ? ` (every interval changed: held below the posterior mean ${fmtNum(mean)})`
    : ''
}

/** A beta posterior of a share as "mean (lower bound) · evidence". */
const fmtPosterior = (p) => `${fmtShare(p.mean)} (${fmtShare(p.lower)}) · ${fmtNum(p.evidence)}`

/** The cells a source and a source on one host share: counts, trust, and the build-time documents. */
function trustCells(t) {
  const buildTime = el('td', { class: 'num' }, fmtNum(t.buildTimeDocuments))
  if (t.buildTimeDocuments > 0) buildTime.append(' ', el('span', { class: 'limited' }, 'lastmod = build time'))
  return [
    el('td', { class: 'num' }, fmtNum(t.signalsReceived)),
    el('td', { class: 'num' }, fmtNum(t.signalsPulled)),
    el('td', { class: 'num' }, fmtNum(t.signalsStale)),
    el('td', { class: 'num' }, fmtNum(t.signalsJudged)),
    el('td', { class: 'num' }, fmtNum(t.signalsConfirmed)),
    el('td', { class: 'num' }, fmtPosterior(t.precision)),
    el('td', { class: 'num' }, fmtPosterior(t.recall)),
    el(
      'td',
      { class: 'num' },
      t.changeProbability > 0 ? fmtShare(t.informativeShare) : el('span', { class: 'limited' }, 'untrusted'),
    ),
    buildTime,
  ]
}

function sourceRow(s) {
  const chosen = s.source === signalView.source
  const open = el(
    'button',
    { type: 'button', class: 'link', 'aria-controls': 'signal-hosts', 'aria-pressed': String(chosen) },
    s.source,
  )
  open.addEventListener('click', () => chooseSource(s.source))
  const tr = el(
    'tr',
    { class: chosen ? 'clickable active' : 'clickable', 'data-source': s.source },
    el('td', {}, open),
    el('td', { class: 'num' }, fmtNum(s.hosts)),
    ...trustCells(s),
    el('td', {}, s.discover ? `yes (importance ${fmtNum(s.discoverImportance)})` : 'no'),
  )
  tr.addEventListener('click', (e) => {
    if (e.target !== open) chooseSource(s.source)
  })
  return tr
}

async function loadSignalSources() {
  try {
    const res = await api('/v1/signal-sources')
    fillTable('signal-sources-table', res.sources.map(sourceRow))
    $('signal-sources-note').replaceChildren(
      ...(res.sources.some((s) => s.signalsReceived > 0)
        ? []
        : [
            'No change signals have been received yet: crawlers send them to POST /v1/signals or POST /v1/sitemaps (see ',
            el('code', {}, 'docs/api.md#signals'),
            ').',
          ]),
    )
    dashboard.signalSources = res
    dashboard.signalSourceLoads = (dashboard.signalSourceLoads ?? 0) + 1
  } catch (err) {
    $('signal-sources-note').textContent = err.message
  }
}

async function loadSignalHosts() {
  if (signalView.source === null) return
  const q = new URLSearchParams({ limit: String(SIGNAL_HOSTS_PER_VIEW) })
  if (signalView.prefix) q.set('hostPrefix', signalView.prefix)
  const cursor = signalView.cursors[signalView.index]
  if (cursor) q.set('after', cursor)
  try {
    const res = await api(`/v1/signal-sources/${encodeURIComponent(signalView.source)}/hosts?${q}`)
    $('signal-hosts-error').textContent = ''
    fillTable(
      'signal-hosts-table',
      res.hosts.map((h) =>
        el(
          'tr',
          { 'data-host': h.host, ...(h.buildTimeDocuments > 0 ? { 'data-build-time': 'true' } : {}) },
          el('td', {}, h.host),
          ...trustCells(h),
        ),
      ),
    )
    signalView.cursors[signalView.index + 1] = res.nextCursor
    const first = signalView.index * SIGNAL_HOSTS_PER_VIEW
    $('signal-hosts-range').textContent =
      res.hosts.length === 0
        ? 'no host matches'
        : `hosts ${fmtNum(first + 1)}–${fmtNum(first + res.hosts.length)}${res.nextCursor === null ? ' (the last)' : ''}`
    $('signal-hosts-prev').disabled = signalView.index === 0
    $('signal-hosts-next').disabled = res.nextCursor === null
    dashboard.signalHosts = res
  } catch (err) {
    $('signal-hosts-error').textContent = err.message
  }
  dashboard.signalHostLoads = (dashboard.signalHostLoads ?? 0) + 1
}

/** Shows a source's hosts from the first, with the filter cleared. */
function chooseSource(source) {
  signalView.source = source
  signalView.prefix = ''
  signalView.cursors = [null]
  signalView.index = 0
  $('signal-host-prefix').value = ''
  $('signal-hosts-title').textContent = `Hosts of ${source}`
  $('signal-hosts').hidden = false
  for (const tr of $('signal-sources-table').querySelectorAll('tbody tr')) {
    const chosen = tr.dataset.source === source
    tr.classList.toggle('active', chosen)
    tr.querySelector('button').setAttribute('aria-pressed', String(chosen))
  }
  return loadSignalHosts()
}

// ---------------------------------------------------------------- lease view

async function loadLeases() {
  try {
    const res = await api(`/v1/lease-overview?limit=50&hours=${$('window-hours').value}`)
    const nowS = dashboard.stats ? secs(dashboard.stats.takenAt) : Date.now() / 1000
    const until = (iso) => {
      const left = secs(iso) - nowS
      return `${fmtTime(iso)} (${left >= 0 ? `in ${fmtDuration(left)}` : `${fmtDuration(-left)} ago`})`
    }
    fillTable(
      'lease-overview-table',
      res.workers.map((w) =>
        el(
          'tr',
          { class: w.pagesPastExpiry > 0 ? 'bad' : '', 'data-worker': w.worker ?? '' },
          el('td', {}, w.worker ?? '(unnamed)'),
          el('td', { class: 'num' }, fmtNum(w.leases)),
          el('td', { class: 'num' }, fmtNum(w.pages)),
          el('td', { class: 'num' }, w.pagesPastExpiry > 0 ? `${fmtNum(w.pagesPastExpiry)} ⚠` : '0'),
          el('td', { class: 'num' }, w.oldestLeaseAgeSeconds === null ? '–' : fmtDuration(w.oldestLeaseAgeSeconds)),
          el('td', {}, until(w.earliestExpiresAt)),
          el('td', {}, until(w.latestExpiresAt)),
        ),
      ),
    )
    const stuck = res.workers.filter((w) => w.pagesPastExpiry > 0).length
    $('lease-note').textContent =
      res.totalWorkers === 0
        ? 'no page is leased'
        : `${fmtNum(res.totalWorkers)} workers hold leased pages` +
          (stuck ? `; ${stuck} hold pages past their lease (neither reported nor given back in time)` : '') +
          (res.workers.length < res.totalWorkers ? `; the ${res.workers.length} listed first` : '')
    leaseHistoryChart(res.history)
    dashboard.leases = res
  } catch (err) {
    $('lease-note').textContent = err.message
  }
}

/** Leased pages that expired unreported or were given back, per hour; the current hour so far is drawn dashed. */
function leaseHistoryChart(history) {
  const fromS = secs(history[0].hourStart)
  const lastS = secs(history[history.length - 1].hourStart)
  const full = history.slice(0, -1)
  const current = history[history.length - 1]
  const expired = full.reduce((n, h) => n + h.pagesExpired, current.pagesExpired)
  const givenBack = full.reduce((n, h) => n + h.pagesGivenBack, current.pagesGivenBack)
  draw(
    'chart-lease-history',
    {
      tzDate: utc,
      scales: { x: timeX(fromS, lastS + HOUR_S), y: { range: fromZero() } },
      axes: [timeAxis, countAxis({ label: 'pages per hour' })],
      series: [
        timeSeries,
        hourly('expired unreported', COLORS.red),
        hourly('given back', COLORS.blue),
        hourly('expired: current hour so far', COLORS.red, { dash: [4, 4] }),
        hourly('given back: current hour so far', COLORS.blue, { dash: [4, 4] }),
      ],
    },
    joinOnX([
      full.map((h) => [secs(h.hourStart), h.pagesExpired]),
      full.map((h) => [secs(h.hourStart), h.pagesGivenBack]),
      [[lastS, current.pagesExpired]],
      [[lastS, current.pagesGivenBack]],
    ]),
  )
  $('lease-history-note').textContent =
    `In the last ${history.length} hours: ${fmtNum(expired)} leased pages expired without a report ` +
    `(returned to the pool by the next lease call), ${fmtNum(givenBack)} were given back by their workers. ` +
    'The current hour is still counting (dashed).'
}

// ---------------------------------------------------------------- page list and bulk actions

const PAGES_PER_VIEW = 25
/** The page list's filter (as the API takes it) and position; `cursors[i]` opens view page i. */
const pageList = { filter: {}, cursors: [null], index: 0 }

function readPageFilter() {
  const f = {}
  const prefix = $('pages-prefix').value.trim()
  const host = $('pages-host').value.trim()
  if (prefix) f.urlPrefix = prefix
  if (host) f.host = host
  if ($('pages-status').value) f.status = $('pages-status').value
  if ($('pages-noisy').value) f.noisy = $('pages-noisy').value === 'true'
  return f
}

function openPage(url) {
  $('page-url').value = url
  history.replaceState(null, '', `#page=${encodeURIComponent(url)}`)
  showPage(url)
    .then(() => $('drilldown').scrollIntoView())
    .catch((err) => {
      $('page-error').textContent = err.message
    })
}

async function loadPageList() {
  const q = new URLSearchParams({ limit: String(PAGES_PER_VIEW) })
  for (const [k, v] of Object.entries(pageList.filter)) q.set(k, String(v))
  const cursor = pageList.cursors[pageList.index]
  if (cursor) q.set('cursor', cursor)
  try {
    const res = await api(`/v1/pages?${q}`)
    $('pages-error').textContent = ''
    fillTable(
      'page-list-table',
      res.pages.map((p) => {
        const tr = el(
          'tr',
          { class: p.status === 'active' ? 'clickable' : 'clickable bad', 'data-url': p.url },
          el('td', {}, p.url),
          el('td', {}, p.noisy ? `${p.status}, noisy` : p.status),
          el('td', {}, p.lastHttpStatus ?? '–'),
          el('td', { class: 'num' }, fmtNum(p.consecutiveFailures)),
          el('td', { class: 'num' }, fmtNum(p.importance)),
          el('td', { class: 'num' }, fmtNum(p.crawlsPerDay)),
          el('td', {}, fmtTime(p.dueAt)),
        )
        tr.addEventListener('click', () => openPage(p.url))
        return tr
      }),
    )
    pageList.cursors[pageList.index + 1] = res.nextCursor
    $('pages-prev').disabled = pageList.index === 0
    $('pages-next').disabled = res.nextCursor === null
    dashboard.pageList = res
    dashboard.pageListLoads = (dashboard.pageListLoads ?? 0) + 1
  } catch (err) {
    $('pages-error').textContent = err.message
  }
}

/** A bulk action on the current filter: counts first (dry run), asks with the count, then applies. */
async function bulkAction(action, set) {
  const filter = pageList.filter
  if (Object.keys(filter).length === 0) {
    $('bulk-result').textContent = 'set a filter first: a bulk action never takes every page'
    return
  }
  try {
    const body = set === undefined ? { filter, action } : { filter, action, set }
    const { matched } = await api('/v1/pages/bulk', { ...body, dryRun: true })
    const what =
      action === 'delete'
        ? 'Delete'
        : `Set ${Object.entries(set)
            .map(([k, v]) => `${k} = ${v}`)
            .join(', ')} on`
    if (matched === 0) {
      $('bulk-result').textContent = 'no page matches the filter'
      return
    }
    if (!window.confirm(`${what} ${matched.toLocaleString('en')} pages?`)) {
      $('bulk-result').textContent = 'cancelled'
      return
    }
    const res = await api('/v1/pages/bulk', body)
    $('bulk-result').textContent = `${action === 'delete' ? 'deleted' : 'updated'} ${fmtNum(res.applied)} pages`
    pageList.cursors = [null]
    pageList.index = 0
    await loadPageList()
  } catch (err) {
    $('bulk-result').textContent = err.message
  }
}

function readBulkSet() {
  const set = {}
  for (const [id, key] of [
    ['bulk-importance', 'importance'],
    ['bulk-min', 'minCrawlsPerDay'],
    ['bulk-max', 'maxCrawlsPerDay'],
  ]) {
    const v = $(id).value.trim()
    if (v !== '') set[key] = Number(v)
  }
  return set
}

// ---------------------------------------------------------------- page drill-down

async function showPage(url) {
  $('page-error').textContent = ''
  let page
  try {
    page = await api(`/v1/pages/by-url?url=${encodeURIComponent(url)}`)
  } catch (err) {
    $('page-error').textContent = err.status === 404 ? 'no such page' : err.message
    $('page-details').hidden = true
    return
  }
  const [history, estimates] = await Promise.all([
    api(`/v1/pages/${page.id}/observations?limit=1000`),
    api(`/v1/pages/${page.id}/estimates`),
  ])
  $('page-details').hidden = false
  dashboard.page = {
    id: page.id,
    url: page.url,
    observations: history.observations.length,
    estimators: estimates.estimators.length,
  }

  // Operational facts first: what an operator checks before reading any estimate.
  const statusText =
    page.status === 'active' ? 'active' : el('span', { class: 'limited', 'data-status': page.status }, page.status)
  const summary = [
    ['status', statusText],
    ['last HTTP status', page.lastHttpStatus ?? '–'],
    ['consecutive failures', fmtNum(page.consecutiveFailures)],
    ['redirect target', page.redirectTo ?? '–'],
    ['lease', page.lease ? `${page.lease.worker ?? '?'} until ${fmtTime(page.lease.expiresAt)}` : '–'],
    ['noisy', page.noisy ? el('span', { class: 'limited' }, 'yes: the content hash changes on every fetch') : 'no'],
    ['url', page.url],
    ['host', page.host],
    ['importance', fmtNum(page.importance)],
    ['crawls / intervals / changes', `${page.crawls} / ${page.intervals} / ${page.changes}`],
    ['changes/day', `${fmtNum(page.changesPerDay)} (${page.estimator})`],
    ['crawls/day', fmtNum(page.crawlsPerDay)],
    ['expected freshness', fmtPct(page.expectedFreshness)],
    ['last crawled', fmtTime(page.lastCrawledAt)],
    ['next crawl', fmtTime(page.nextCrawlAt)],
    ['due', fmtTime(page.dueAt)],
  ]
  // What the estimate learns from (docs/math.md 1.12, 3.5): the fleet's prior, the posterior, the fitted shape.
  const learning = estimates.learning
  summary.push(
    [
      'prior',
      learning.prior
        ? `${learning.prior.scope === 'host' ? 'host' : 'fleet'}: mean ${fmtNum(learning.prior.meanChangesPerDay)} changes/day, shape ${fmtNum(learning.prior.shape)}`
        : 'none (each page learns alone)',
    ],
    [
      'posterior',
      learning.posterior
        ? `${fmtNum(learning.posterior.changesPerDay)} changes/day${heldNote(learning.posterior)}, 90 % in ${fmtNum(learning.posterior.ci90[0])} – ${fmtNum(learning.posterior.ci90[1])} (${learning.posterior.intervals} intervals)`
        : '–',
    ],
    ['age law', learning.shape.note],
  )
  $('page-summary').replaceChildren(...summary.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))

  const obs = [...history.observations].reverse()
  const at = (o) => secs(o.crawledAt)
  const failed = (o) => o.httpStatus !== null && (o.httpStatus < 200 || o.httpStatus >= 400)
  // The axis covers the observations' own time range, padded a little (an hour each side for one crawl).
  const first = obs.length ? at(obs[0]) : 0
  const last = obs.length ? at(obs[obs.length - 1]) : 0
  const pad = Math.max(HOUR_S, (last - first) * 0.03)
  draw(
    'chart-timeline',
    {
      tzDate: utc,
      scales: { x: timeX(first - pad, last + pad), y: { range: [-0.5, 1.5] } },
      axes: [
        timeAxis,
        {
          size: 80,
          splits: () => [0, 0.5, 1],
          values: (_u, ticks) => ticks.map((t) => (t === 1 ? 'changed' : t === 0 ? 'same' : 'n/a')),
        },
      ],
      series: [
        timeSeries,
        dots('changed', COLORS.red),
        dots('unchanged', COLORS.green),
        dots('no change info', COLORS.grey),
        dots('failed fetch', COLORS.orange),
      ],
    },
    joinOnX([
      obs.filter((o) => o.changed === true).map((o) => [at(o), 1]),
      obs.filter((o) => o.changed === false).map((o) => [at(o), 0]),
      obs.filter((o) => o.changed === null && !failed(o)).map((o) => [at(o), 0.5]),
      obs.filter((o) => o.changed === null && failed(o)).map((o) => [at(o), 0.5]),
    ]),
  )

  const values = estimates.estimators.map((e) => e.changesPerDay).filter((v) => v !== null && Number.isFinite(v))
  const max = Math.max(
    ...values,
    ...estimates.estimators.flatMap((e) => (e.ci95 ? [e.ci95[1]] : [])).filter(Number.isFinite),
    1e-12,
  )
  fillTable(
    'estimators-table',
    estimates.estimators.map((e) => {
      const bar = el('div', { class: 'bar' })
      if (e.changesPerDay !== null)
        bar.append(el('span', { style: `width:${Math.min(100, (100 * e.changesPerDay) / max)}%` }))
      if (e.ci95)
        bar.append(
          el('i', {
            style: `left:${(100 * e.ci95[0]) / max}%;width:${Math.max(0.5, (100 * (e.ci95[1] - e.ci95[0])) / max)}%`,
          }),
        )
      const row = el(
        'tr',
        { class: e.name === page.estimator ? 'active' : '', title: e.note ?? '' },
        el('td', {}, e.name),
        el('td', {}, e.section),
        el('td', {}, e.source),
        el('td', {}, fmtNum(e.changesPerDay)),
        el('td', {}, e.ci95 ? `${fmtNum(e.ci95[0])} – ${fmtNum(e.ci95[1])}` : ''),
        el('td', { class: 'barcell' }, bar),
      )
      return row
    }),
  )

  const dist = estimates.updateDistribution
  $('distribution-method').textContent = dist ? `(method ${dist.method})` : ''
  if (dist && dist.ageCdf.length > 0) {
    // G_U: the age of the content at a random time; F_U: the time between updates (docs/math.md 2.2).
    // With a constant crawl interval G_U is known only at its multiples: points, not a line.
    const fit = dist.poissonFit
    const lattice = dist.latticeDays !== null
    const ages = dist.ageCdf.map((p) => [p.ageDays, p.cdf])
    const intervals = (dist.intervalCdf ?? []).map((p) => [p.intervalDays, p.cdf])
    const xMax = Math.max(...ages.map((p) => p[0]), ...intervals.map((p) => p[0]))
    const rate = fit.changesPerDay
    const poisson = rate
      ? Array.from({ length: 101 }, (_, i) => (xMax * i) / 100).map((x) => [x, 1 - Math.exp(-rate * x)])
      : []
    const curve = { points: { ...markers, show: false }, value: (_u, v) => fmtNum(v) }
    draw(
      'chart-distribution',
      {
        scales: { x: { time: false }, y: { range: [0, 1] } },
        axes: [{ label: 'days' }, {}],
        series: [
          { label: 'days', value: (_u, v) => fmtNum(v) },
          lattice
            ? dots(`age G_U at multiples of ${fmtNum(dist.latticeDays)} d`, COLORS.blue, {
                value: (_u, v) => fmtNum(v),
              })
            : { ...line('age G_U', COLORS.blue), ...curve },
          { ...line('time between updates F_U', COLORS.orange), ...curve },
          line(rate ? `Poisson at ${fmtNum(rate)}/day (G_U = F_U)` : 'Poisson', COLORS.grey, {
            dash: [4, 4],
            ...curve,
          }),
        ],
      },
      joinOnX([ages, intervals, poisson]),
    )
    const verdict = {
      'consistent-with-poisson': 'consistent with Poisson',
      'not-poisson': 'not Poisson',
      'cannot-tell': 'cannot tell whether Poisson',
    }[fit.verdict]
    const notes = [
      fit.pValue === null
        ? `${verdict}: ${fit.note}`
        : `${verdict} (p = ${fmtNum(fit.pValue, 2)}; distance ${fmtNum(fit.distance, 2)}, Poisson pages with these crawls up to ${fmtNum(fit.distanceBand95, 2)})`,
    ]
    if (dist.meanUpdateIntervalDays !== null)
      notes.push(`mean update interval ${fmtNum(dist.meanUpdateIntervalDays)} days`)
    else if (dist.meanUpdateIntervalBoundDays !== null)
      notes.push(`mean update interval at most ${fmtNum(dist.meanUpdateIntervalBoundDays)} days (not identified)`)
    if (dist.coefficientOfVariation !== null) notes.push(`CV ${fmtNum(dist.coefficientOfVariation)}`)
    if (dist.intervalCdf === null) notes.push('F_U not identified by these crawls')
    for (const c of dist.comparisons.filter((c) => c.estimates === 'F_U' && c.meanDays !== null)) {
      notes.push(`${c.method} (earlier work, biased unless Poisson): mean ${fmtNum(c.meanDays)} days`)
    }
    $('distribution-note').textContent = notes.join(' · ')
    $('distribution-note').title = [dist.reason, dist.note, fit.note].join('\n')
  } else {
    draw('chart-distribution', {}, [[], []])
    $('distribution-note').textContent = 'not enough history for the update-interval distribution yet'
    $('distribution-note').title = ''
  }

  fillTable(
    'observations-table',
    history.observations
      .slice(0, 200)
      .map((o) =>
        el(
          'tr',
          {},
          el('td', {}, fmtTime(o.crawledAt)),
          el('td', {}, o.changed === null ? '–' : o.changed ? 'yes' : 'no'),
          el('td', {}, o.httpStatus ?? ''),
          el('td', {}, o.intervalSeconds === null ? '' : fmtDuration(o.intervalSeconds)),
          el('td', {}, [o.late ? 'late' : '', o.applied ? '' : 'not applied'].filter(Boolean).join(', ')),
        ),
      ),
  )
}

// ---------------------------------------------------------------- wiring

$('api-key').value = apiKey()
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const v = $('api-key').value.trim()
  if (v) localStorage.setItem(KEY_STORAGE, v)
  else localStorage.removeItem(KEY_STORAGE)
  refresh().then(loadLeases)
  loadHosts()
  loadSignalSources().then(loadSignalHosts)
  fillPageSuggestions()
})
/** Previous and next buttons `${prefix}-prev` and `${prefix}-next` of a list paged by cursors (`state.cursors`, `state.index`). */
function wirePager(prefix, state, load) {
  $(`${prefix}-prev`).addEventListener('click', () => {
    if (state.index > 0) state.index--
    load()
  })
  $(`${prefix}-next`).addEventListener('click', () => {
    if (state.cursors[state.index + 1]) state.index++
    load()
  })
}
$('window-hours').addEventListener('change', () => refresh().then(loadLeases))
$('pages-form').addEventListener('submit', (e) => {
  e.preventDefault()
  pageList.filter = readPageFilter()
  pageList.cursors = [null]
  pageList.index = 0
  loadPageList()
})
wirePager('pages', pageList, loadPageList)
$('bulk-delete').addEventListener('click', () => bulkAction('delete'))
$('bulk-update').addEventListener('click', () => {
  const set = readBulkSet()
  if (Object.keys(set).length === 0) $('bulk-result').textContent = 'give importance, min/day or max/day'
  else bulkAction('update', set)
})
$('host-form').addEventListener('submit', (e) => {
  e.preventDefault()
  hostView.prefix = $('host-prefix').value.trim()
  reloadHosts()
})
wirePager('hosts', hostView, loadHosts)
for (const th of $('host-overview-table').querySelectorAll('th[data-sort]')) {
  th.addEventListener('click', () => {
    const key = th.dataset.sort
    if (hostView.sort === key) hostView.order = hostView.order === 'asc' ? 'desc' : 'asc'
    else {
      hostView.sort = key
      hostView.order = key === 'host' ? 'asc' : 'desc'
    }
    reloadHosts()
  })
}
$('signal-hosts-form').addEventListener('submit', (e) => {
  e.preventDefault()
  signalView.prefix = $('signal-host-prefix').value.trim()
  signalView.cursors = [null]
  signalView.index = 0
  loadSignalHosts()
})
wirePager('signal-hosts', signalView, loadSignalHosts)
$('page-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const url = $('page-url').value.trim()
  if (url) {
    history.replaceState(null, '', `#page=${encodeURIComponent(url)}`)
    showPage(url).catch((err) => {
      $('page-error').textContent = err.message
    })
  }
})
window.addEventListener('resize', () => {
  for (const [id, chart] of Object.entries(charts))
    chart.setSize({ width: Math.max(280, $(id).clientWidth), height: 220 })
})

await refresh()
await loadHosts()
await loadSignalSources()
await loadLeases()
await loadPageList()
fillPageSuggestions()
const linked = new URLSearchParams(location.hash.slice(1)).get('page')
if (linked) {
  $('page-url').value = linked
  await showPage(linked).catch((err) => {
    $('page-error').textContent = err.message
  })
}
dashboard.ready = true
// The host view's order changes with the optimiser's runs only (docs/api.md "Host overview"): it reloads on every
// HOST_REFRESH_TICKS-th refresh, and at once when sorted or paged. Signal trust moves with crawls, but the source
// list sums every host's counts: it reloads as seldom, with the chosen source's hosts where they are.
const HOST_REFRESH_TICKS = 6
let ticks = 0
setInterval(() => {
  refresh().then(loadLeases)
  if (++ticks % HOST_REFRESH_TICKS === 0) {
    loadHosts()
    loadSignalSources().then(loadSignalHosts)
  }
}, REFRESH_MS)
