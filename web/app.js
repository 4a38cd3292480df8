// recrawl dashboard: plain ES module, no build step. Reads GET /v1/stats every REFRESH_MS and the
// page endpoints on demand; draws with uPlot (served from the uplot package at /vendor/uplot/).
/* global uPlot */

const REFRESH_MS = 10_000
const KEY_STORAGE = 'recrawl.apiKey'
const COLORS = { blue: '#2f6fdf', orange: '#e07b24', green: '#2f9e5b', red: '#d1495b', grey: '#8a8f98', purple: '#7b5ea7' }

/** What tests (and curious operators) can read: per chart, how many data points it drew. */
const dashboard = { refreshes: 0, charts: {}, errors: [], page: null }
window.recrawlDashboard = dashboard

const $ = (id) => document.getElementById(id)
const charts = {}

// ---------------------------------------------------------------- API

function apiKey() {
  return localStorage.getItem(KEY_STORAGE) || ''
}

async function api(path) {
  const headers = { accept: 'application/json' }
  const key = apiKey()
  if (key) headers.authorization = `Bearer ${key}`
  const res = await fetch(path, { headers })
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`
    try {
      const body = await res.json()
      if (body.detail) detail = `${res.status}: ${body.detail}`
    } catch {}
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
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')
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

/** Joins several [x, y] lists on the union of their x values (uPlot needs one shared x array). */
function joinOnX(lists) {
  const xs = [...new Set(lists.flatMap((l) => l.map((p) => p[0])))].sort((a, b) => a - b)
  const index = new Map(xs.map((x, i) => [x, i]))
  const ys = lists.map((l) => {
    const y = new Array(xs.length).fill(null)
    for (const [x, v] of l) y[index.get(x)] = v
    return y
  })
  return [xs, ...ys]
}

function countPoints(data) {
  let n = 0
  for (let s = 1; s < data.length; s++) for (const v of data[s]) if (v !== null && v !== undefined && Number.isFinite(v)) n++
  return n
}

/** (Re)draws a chart into its container and records how many points it holds. */
function draw(id, opts, data) {
  const target = $(id)
  const points = countPoints(data)
  target.dataset.points = String(points)
  dashboard.charts[id] = { points, series: data.length - 1 }
  if (charts[id]) charts[id].destroy()
  target.replaceChildren()
  if (points === 0) {
    target.append(el('p', { class: 'empty' }, 'no data yet'))
    delete charts[id]
    return
  }
  const width = Math.max(280, target.clientWidth || 480)
  charts[id] = new uPlot({ width, height: 220, legend: { live: true }, ...opts }, data, target)
}

const line = (label, stroke, extra = {}) => ({ label, stroke, width: 2, spanGaps: true, points: { show: false }, ...extra })
const dots = (label, stroke, extra = {}) => ({ label, stroke, fill: stroke, paths: () => null, points: { show: true, size: 7, fill: stroke }, ...extra })

function histogramChart(id, noteId, histogram, unit) {
  const centres = histogram.counts.map((_, i) => (Math.log10(histogram.edgesPerDay[i]) + Math.log10(histogram.edgesPerDay[i + 1])) / 2)
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
        { label: 'pages' },
      ],
      series: [
        { label: unit, value: (_u, v) => (v === null ? '–' : `≈ ${fmtNum(10 ** v)}`) },
        { label: 'pages', stroke: COLORS.blue, fill: 'rgba(47,111,223,0.35)', paths: uPlot.paths.bars({ size: [0.9, 100] }), points: { show: false } },
      ],
    },
    [centres, anyPages ? counts : counts.map(() => null)],
  )
  const extra = []
  if (histogram.below) extra.push(`${histogram.below} below ${fmtNum(histogram.edgesPerDay[0])}`)
  if (histogram.above) extra.push(`${histogram.above} at or above ${fmtNum(histogram.edgesPerDay[histogram.edgesPerDay.length - 1])}`)
  if (histogram.unknown) extra.push(`${histogram.unknown} without a value`)
  $(noteId).textContent = extra.join(' · ')
}

// ---------------------------------------------------------------- overview

function renderTiles(s) {
  const tiles = [
    ['pages', fmtNum(s.pages)],
    ['overdue pages', fmtNum(s.pagesOverdue)],
    ['oldest overdue', s.pagesOverdue ? fmtDuration(s.oldestOverdueAgeSeconds) : '–'],
    ['expected freshness', fmtPct(s.expectedFreshness)],
    ['budget / day', fmtNum(s.budgetCrawlsPerDay)],
    ['planned / day', fmtNum(s.plannedCrawlsPerDay)],
    ['crawled / day (last hour)', fmtNum(s.crawlsPerDayLastHour)],
    ['leased pages', fmtNum(s.pagesLeased)],
    ['λ', fmtNum(s.optimizer.lambda)],
  ]
  $('tiles').replaceChildren(...tiles.map(([k, v]) => el('div', { class: 'tile' }, el('span', { class: 'v' }, v), el('span', { class: 'k' }, k))))
}

function renderOverview(s) {
  renderTiles(s)
  const points = s.series.points
  const runs = [...s.optimizerRuns].reverse()

  draw(
    'chart-freshness',
    {
      scales: { y: { range: [0, 1] } },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)} %`) }],
      series: [{}, line('sampled', COLORS.green, { value: (_u, v) => fmtPct(v) }), dots('optimiser run', COLORS.purple, { value: (_u, v) => fmtPct(v) })],
    },
    joinOnX([
      points.filter((p) => p.expectedFreshness !== null).map((p) => [secs(p.at), p.expectedFreshness]),
      runs.filter((r) => r.expectedFreshness !== null).map((r) => [secs(r.startedAt), r.expectedFreshness]),
    ]),
  )

  draw(
    'chart-budget',
    {
      series: [
        {},
        line('budget', COLORS.grey, { dash: [6, 4] }),
        line('planned Σρ', COLORS.blue),
        line('crawled (last hour × 24)', COLORS.orange),
        { ...line('crawled per hour × 24', COLORS.red), paths: uPlot.paths.stepped({ align: 1 }) },
      ],
    },
    joinOnX([
      points.map((p) => [secs(p.at), p.budgetCrawlsPerDay]),
      points.map((p) => [secs(p.at), p.plannedCrawlsPerDay]),
      points.map((p) => [secs(p.at), p.crawlsPerDayLastHour]),
      s.crawlActivity.map((a) => [secs(a.hourStart), a.crawls * 24]),
    ]),
  )

  draw(
    'chart-overdue',
    {
      scales: { h: { auto: true } },
      axes: [{}, { label: 'pages' }, { scale: 'h', side: 1, label: 'oldest (h)', grid: { show: false } }],
      series: [{}, line('overdue pages', COLORS.red), line('oldest overdue (h)', COLORS.grey, { scale: 'h' })],
    },
    joinOnX([points.map((p) => [secs(p.at), p.pagesOverdue]), points.map((p) => [secs(p.at), p.oldestOverdueAgeSeconds / 3600])]),
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
    s.topOverdueHosts.map((h) => el('tr', {}, el('td', {}, h.host), el('td', {}, fmtNum(h.pagesOverdue)), el('td', {}, fmtDuration(h.oldestOverdueAgeSeconds)))),
  )
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
    $('status').textContent = err.status === 401 || err.status === 403 ? `${err.message} — enter an API key with the reader role` : `error: ${err.message}`
    $('status').className = 'status error'
  }
}

async function fillPageSuggestions() {
  try {
    const { pages } = await api('/v1/pages?limit=50')
    $('page-urls').replaceChildren(...pages.map((p) => el('option', { value: p.url })))
  } catch {}
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
  dashboard.page = { id: page.id, url: page.url, observations: history.observations.length, estimators: estimates.estimators.length }

  const summary = [
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
    ['lease', page.lease ? `${page.lease.worker ?? '?'} until ${fmtTime(page.lease.expiresAt)}` : '–'],
  ]
  $('page-summary').replaceChildren(...summary.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))

  const obs = [...history.observations].reverse()
  const at = (o) => secs(o.crawledAt)
  draw(
    'chart-timeline',
    {
      scales: { y: { range: [-0.5, 1.5] } },
      axes: [{}, { size: 80, splits: () => [0, 0.5, 1], values: (_u, ticks) => ticks.map((t) => (t === 1 ? 'changed' : t === 0 ? 'same' : 'n/a')) }],
      series: [{}, dots('changed', COLORS.red), dots('unchanged', COLORS.green), dots('no change info', COLORS.grey)],
    },
    joinOnX([
      obs.filter((o) => o.changed === true).map((o) => [at(o), 1]),
      obs.filter((o) => o.changed === false).map((o) => [at(o), 0]),
      obs.filter((o) => o.changed === null).map((o) => [at(o), 0.5]),
    ]),
  )

  const values = estimates.estimators.map((e) => e.changesPerDay).filter((v) => v !== null && Number.isFinite(v))
  const max = Math.max(...values, ...estimates.estimators.flatMap((e) => (e.ci95 ? [e.ci95[1]] : [])).filter(Number.isFinite), 1e-12)
  fillTable(
    'estimators-table',
    estimates.estimators.map((e) => {
      const bar = el('div', { class: 'bar' })
      if (e.changesPerDay !== null) bar.append(el('span', { style: `width:${Math.min(100, (100 * e.changesPerDay) / max)}%` }))
      if (e.ci95) bar.append(el('i', { style: `left:${(100 * e.ci95[0]) / max}%;width:${Math.max(0.5, (100 * (e.ci95[1] - e.ci95[0])) / max)}%` }))
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
  if (dist && dist.points.length > 0) {
    const xs = dist.points.map((p) => p.ageDays)
    const mean = dist.meanUpdateIntervalDays
    draw(
      'chart-distribution',
      {
        scales: { x: { time: false }, y: { range: [0, 1] } },
        axes: [{ label: 'age (days)' }, {}],
        series: [
          { label: 'age (days)', value: (_u, v) => fmtNum(v) },
          { ...line('estimated G_U', COLORS.blue), paths: uPlot.paths.stepped({ align: 1 }), value: (_u, v) => fmtNum(v) },
          line('Poisson with the same mean', COLORS.grey, { dash: [4, 4], value: (_u, v) => fmtNum(v) }),
        ],
      },
      [xs, dist.points.map((p) => p.cdf), xs.map((x) => (mean && mean > 0 ? 1 - Math.exp(-x / mean) : null))],
    )
    const notes = []
    if (mean !== null) notes.push(`mean update interval ${fmtNum(mean)} days`)
    if (dist.coefficientOfVariation !== null) notes.push(`CV ${fmtNum(dist.coefficientOfVariation)}`)
    if (dist.poissonFitDistance !== null) notes.push(`distance from Poisson ${fmtNum(dist.poissonFitDistance)}`)
    $('distribution-note').textContent = notes.join(' · ')
  } else {
    draw('chart-distribution', {}, [[], []])
    $('distribution-note').textContent = 'not enough history for the update-interval distribution yet'
  }

  fillTable(
    'observations-table',
    history.observations.slice(0, 200).map((o) =>
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
  refresh()
  fillPageSuggestions()
})
$('window-hours').addEventListener('change', refresh)
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
  for (const [id, chart] of Object.entries(charts)) chart.setSize({ width: Math.max(280, $(id).clientWidth), height: 220 })
})

await refresh()
fillPageSuggestions()
const linked = new URLSearchParams(location.hash.slice(1)).get('page')
if (linked) {
  $('page-url').value = linked
  await showPage(linked).catch((err) => {
    $('page-error').textContent = err.message
  })
}
dashboard.ready = true
setInterval(refresh, REFRESH_MS)
