import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ESTIMATOR_NAMES } from '../../src/math/estimators/index.ts'
import { createRandom } from '../../src/math/random.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

/** A page that changes as a Poisson process (rate Δ) crawled at Poisson times (rate p), reporting Last-Modified. */
function simulatedHistory(url: string, changesPerDay: number, crawlsPerDay: number, crawls: number, seed: number) {
  const random = createRandom(seed)
  const startMs = T0 - 400 * MS_PER_DAY
  let nextChangeMs = startMs + random.exponential(changesPerDay) * MS_PER_DAY
  let lastChangeMs = startMs - MS_PER_DAY
  let atMs = startMs
  const items: Record<string, unknown>[] = []
  for (let k = 0; k < crawls; k++) {
    atMs += Math.max(1000, Math.round(random.exponential(crawlsPerDay) * MS_PER_DAY))
    let changed = false
    while (nextChangeMs <= atMs) {
      changed = true
      lastChangeMs = nextChangeMs
      nextChangeMs += random.exponential(changesPerDay) * MS_PER_DAY
    }
    items.push({
      url,
      crawledAt: iso(atMs),
      ...(k > 0 ? { changed } : {}),
      lastModified: iso(Math.floor(lastChangeMs / 1000) * 1000),
    })
  }
  return items
}

describe('GET /v1/pages/{id}/estimates', () => {
  it('reports every estimator with the exact MLE, its confidence interval and the update distribution', async (ctx) => {
    const t = await testAppFor(ctx)
    const url = 'https://est.example/page'
    const items = simulatedHistory(url, 0.5, 1, 300, 11)
    const post = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: items } })
    assert.equal(post.json().accepted, 300)
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${url}` })).json()
    const res = await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/estimates` })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.intervals, 299)
    assert.equal(body.historyObservations, 300)
    const byName = new Map(body.estimators.map((e: { name: string }) => [e.name, e]))
    for (const name of [...ESTIMATOR_NAMES, 'mleExact', 'momentMatchingExact']) {
      assert.ok(byName.has(name), `missing ${name}`)
    }
    const exact = byName.get('mleExact') as { changesPerDay: number; ci95: [number, number] }
    const online = byName.get('mle') as { changesPerDay: number }
    assert.ok(
      Math.abs(online.changesPerDay - exact.changesPerDay) <= 0.005 * exact.changesPerDay,
      'online MLE within 0.5 % of the exact one',
    )
    assert.ok(exact.ci95[0] < exact.changesPerDay && exact.changesPerDay < exact.ci95[1])
    assert.ok(exact.ci95[0] < 0.5 && 0.5 < exact.ci95[1], `true rate 0.5 inside ${exact.ci95}`)
    const probability = body.changeClasses.reduce((s: number, c: { probability: number }) => s + c.probability, 0)
    assert.ok(Math.abs(probability - 1) < 1e-9)
    const dist = body.updateDistribution
    assert.equal(dist.method, 'M2')
    assert.ok(dist.ageCdf.length > 3)
    assert.ok(dist.intervalCdf.length > 0, 'F_U is identified from Last-Modified ages')
    assert.ok(
      dist.intervalCdf.every(
        (p: { cdf: number }, i: number, all: { cdf: number }[]) => i === 0 || p.cdf >= all[i - 1]!.cdf,
      ),
    )
    assert.ok(Math.abs(dist.meanUpdateIntervalDays - 2) < 0.6, `1/μ ${dist.meanUpdateIntervalDays} for a true 2 days`)
    assert.notEqual(dist.poissonFit.verdict, 'not-poisson', dist.poissonFit.note)
    assert.ok(
      dist.poissonFit.pValue > dist.poissonFit.level && dist.poissonFit.distance < dist.poissonFit.distanceBand95 * 1.5,
    )
    assert.deepEqual(
      dist.comparisons.map((c: { method: string }) => c.method),
      ['M1'],
    )
    const local = body.localRate
    assert.ok(local.changesPerDay > 0)
    assert.deepEqual(
      local.estimators.map((e: { name: string }) => e.name),
      ['mean', 'weibull', 'lambdaBar', 'duane', 'duaneCumulative'],
    )
    assert.ok(local.windows.length >= 1)
    const windows = local.windows as { from: string; to: string; points: number }[]
    assert.equal(windows[windows.length - 1]!.from, local.windowStart, 'the last window is the current one')
    for (let i = 1; i < windows.length; i++)
      assert.equal(windows[i]!.from, windows[i - 1]!.to, 'windows are contiguous')
  })

  it('periodic crawls of a Poisson page without Last-Modified (μΔ = 2): M4, rate not identified, not labelled non-Poisson', async (ctx) => {
    const t = await testAppFor(ctx)
    const url = 'https://est.example/periodic'
    const random = createRandom(5)
    const startMs = T0 - 300 * MS_PER_DAY
    let nextChangeMs = startMs + random.exponential(1) * MS_PER_DAY
    const items: Record<string, unknown>[] = []
    for (let k = 0; k < 150; k++) {
      const atMs = startMs + k * 2 * MS_PER_DAY
      let changed = false
      while (nextChangeMs <= atMs) {
        changed = true
        nextChangeMs += random.exponential(1) * MS_PER_DAY
      }
      items.push({ url, crawledAt: iso(atMs), ...(k > 0 ? { changed } : {}) })
    }
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: items } })).json()
        .accepted,
      150,
    )
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${url}` })).json()
    const dist = (await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/estimates` })).json()
      .updateDistribution
    assert.equal(dist.method, 'M4')
    assert.equal(dist.latticeDays, 2)
    assert.equal(dist.meanUpdateIntervalDays, null)
    assert.equal(dist.intervalCdf, null)
    assert.ok(dist.meanUpdateIntervalBoundDays >= 1, `bound ${dist.meanUpdateIntervalBoundDays} ≥ the true 1 day`)
    assert.notEqual(dist.poissonFit.verdict, 'not-poisson', dist.poissonFit.note)
    assert.ok(Math.abs(dist.poissonFit.changesPerDay - 1) < 0.35, `Poisson rate ${dist.poissonFit.changesPerDay}`)
    assert.deepEqual(
      dist.comparisons.map((c: { method: string }) => c.method),
      ['M3', 'M5'],
    )
  })

  it('a page with no history has only empty estimates', async (ctx) => {
    const t = await testAppFor(ctx)
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: [{ url: 'https://est.example/new' }] },
    })
    assert.equal(put.statusCode, 200)
    const page = (await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://est.example/new' })).json()
    const body = (await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/estimates` })).json()
    assert.equal(body.intervals, 0)
    assert.ok(body.estimators.every((e: { changesPerDay: number | null }) => e.changesPerDay === null))
    assert.equal(body.updateDistribution, null)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages/999999/estimates' })).statusCode, 404)
  })
})

/** GET `path`, which must answer 200; its JSON body. */
async function getOk(t: TestApp, path: string) {
  const res = await t.app.inject({ method: 'GET', url: path })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

describe('what a page learns from (GET /v1/pages/{id}/estimates, learning)', () => {
  it('shows the host prior, the posterior the solve used with its interval, and the shape, or why there is none', async (ctx) => {
    const t = await testAppFor(ctx)
    const get = (path: string) => getOk(t, path)
    // Ten slow pages with three crawls each (one changed interval among them), one page never recrawled.
    const observations: Record<string, unknown>[] = []
    for (let p = 0; p < 10; p++) {
      const url = `https://learn.example/p${p}`
      for (let k = 0; k < 3; k++)
        observations.push({
          url,
          crawledAt: iso(T0 - (30 - 10 * k) * MS_PER_DAY),
          ...(k > 0 ? { changed: p === k } : {}),
        })
    }
    observations.push({ url: 'https://learn.example/new', crawledAt: iso(T0 - MS_PER_DAY) })
    const post = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
    assert.equal(post.json().accepted, observations.length, post.body)

    const before = await get(`/v1/pages/${(await get('/v1/pages/by-url?url=https://learn.example/p1')).id}/estimates`)
    assert.equal(before.learning.prior, null, 'no prior before the first optimiser run')
    assert.equal(before.learning.posterior, null)

    const solve = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(solve.statusCode, 200, solve.body)
    const page = await get('/v1/pages/by-url?url=https://learn.example/p1')
    const { learning } = await get(`/v1/pages/${page.id}/estimates`)
    assert.equal(learning.prior.scope, 'host')
    assert.ok(learning.prior.shape > 0 && learning.prior.meanChangesPerDay > 0)
    // The estimate the page reports is the posterior the solve used, inside its own 90 % interval.
    assert.equal(page.changesPerDay, learning.posterior.changesPerDay)
    const [lo, hi] = learning.posterior.ci90
    assert.ok(lo < page.changesPerDay && page.changesPerDay < hi, `${page.changesPerDay} in ${lo}–${hi}`)
    assert.equal(learning.posterior.intervals, 2)
    assert.equal(
      learning.posterior.meanChangesPerDay,
      learning.posterior.changesPerDay,
      'an unchanged interval: the mean',
    )
    // One changed 10-day interval of two: the page's own MLE is about 0.07 a day; its host's pages changed less.
    assert.ok(learning.posterior.changesPerDay < 0.069, `shrunk toward the host: ${learning.posterior.changesPerDay}`)
    assert.equal(learning.shape.model, 'poisson')
    assert.match(learning.shape.note, /not enough evidence/)

    // A page with no interval starts at its host's prior mean.
    const fresh = await get('/v1/pages/by-url?url=https://learn.example/new')
    const freshLearning = (await get(`/v1/pages/${fresh.id}/estimates`)).learning
    assert.ok(Math.abs(freshLearning.posterior.changesPerDay - learning.prior.meanChangesPerDay) < 1e-9)
    assert.equal(freshLearning.posterior.intervals, 0)
  })
  it('shows the estimate the solve used for a page whose every interval changed: not the posterior mean', async (ctx) => {
    const t = await testAppFor(ctx)
    const get = (path: string) => getOk(t, path)
    const observations: Record<string, unknown>[] = []
    // A page whose every interval changed, on a host of pages that change about once an hour: its estimate is the
    // posterior's harmonic mean held at four times its own evidence, not the mean (docs/math.md 1.12).
    for (let p = 0; p < 5; p++)
      for (let k = 0; k < 7; k++)
        observations.push({
          url: `https://busy.example/p${p}`,
          crawledAt: iso(T0 - 30 * MS_PER_DAY + k * 3_600_000),
          ...(k > 0 ? { changed: k % 3 !== 0 } : {}),
        })
    for (let k = 0; k < 3; k++)
      observations.push({
        url: 'https://busy.example/slowly-crawled',
        crawledAt: iso(T0 - (30 - 10 * k) * MS_PER_DAY),
        ...(k > 0 ? { changed: true } : {}),
      })
    const post = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
    assert.equal(post.json().accepted, observations.length, post.body)
    const solve = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(solve.statusCode, 200, solve.body)
    const busy = await get('/v1/pages/by-url?url=https://busy.example/slowly-crawled')
    const busyPosterior = (await get(`/v1/pages/${busy.id}/estimates`)).learning.posterior
    assert.equal(busy.changesPerDay, busyPosterior.changesPerDay, 'the estimate the page reports, not the mean')
    assert.ok(busyPosterior.changesPerDay < busyPosterior.meanChangesPerDay, JSON.stringify(busyPosterior))
    assert.ok(Math.abs(busyPosterior.changesPerDay - (4 * Math.log(4)) / 10) < 1e-9, JSON.stringify(busyPosterior))
  })
})
