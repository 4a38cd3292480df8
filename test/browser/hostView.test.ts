import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'
import { launchChromium } from '../helpers/browser.ts'
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'

/**
 * The dashboard's host view in a real browser (Debian's chromium through playwright-core) against the
 * service on a real port: one page of hosts at a time from GET /v1/host-overview, sorted by a click on a
 * heading, paged, filtered by a host prefix, with failures without an HTTP status shown by kind and capped
 * hosts marked. On the same data: the allowance tile, the lease view (a worker holding pages past its lease
 * first), a failing page's drill-down with its operational facts first, and the page list with its filters,
 * a row opening the drill-down and bulk actions confirmed with their count. Screenshots go to test-artifacts/
 * (docs/img holds copies for the README).
 */
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const HOSTS = 60
/** The HOSTS hosts with crawls, and one whose pages are only leased. */
const TOTAL_HOSTS = HOSTS + 1
const PER_VIEW = 25

interface PageListWindow {
  recrawlDashboard?: { pageListLoads?: number; page?: { url: string } | null }
}

interface LeaseWindow {
  recrawlDashboard?: { leases?: { history: unknown[] } }
}

interface HostViewWindow {
  recrawlDashboard?: { ready?: boolean; hostLoads?: number; hosts?: { total: number; hosts: { host: string }[] } }
}

const hostName = (i: number) => `h${String(i).padStart(2, '0')}.example`

/** HOSTS hosts with i + 1 pages each; host 7 times out and fails DNS, host 3 gets 503s, host 5 is capped. */
async function seed(t: TestApp): Promise<void> {
  const pages = []
  for (let i = 0; i < HOSTS; i++) for (let j = 0; j <= i; j++) pages.push({ url: `https://${hostName(i)}/${j}` })
  const put = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
  assert.equal(put.statusCode, 200, put.body)
  const cap = await t.app.inject({ method: 'PUT', url: '/v1/hosts/h05.example', payload: { maxCrawlsPerDay: 0.5 } })
  assert.equal(cap.statusCode, 200, cap.body)
  const observations: Record<string, unknown>[] = []
  for (let k = 6; k >= 1; k--) {
    const at = iso(T0 - k * MS_PER_HOUR)
    for (const p of pages) {
      const host = new URL(p.url).host
      if (host === 'h07.example' && k <= 3)
        observations.push({ ...p, crawledAt: at, fetchError: k === 1 ? 'dns' : 'timeout' })
      else if (host === 'h03.example' && k <= 2) observations.push({ ...p, crawledAt: at, httpStatus: 503 })
      else observations.push({ ...p, crawledAt: at, httpStatus: 200, contentHash: `${p.url}#${k % 2}` })
    }
  }
  for (let i = 0; i < observations.length; i += 1000) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: { observations: observations.slice(i, i + 1000) },
    })
    assert.equal(res.statusCode, 200, res.body)
  }
  const opt = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(opt.statusCode, 200, opt.body)
  // Two workers lease the pages of a new host: one holds 3 for a minute and never reports, the other 5 for an hour.
  const fresh = Array.from({ length: 8 }, (_, i) => ({ url: `https://leases.example/${i}` }))
  const putFresh = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: fresh } })
  assert.equal(putFresh.statusCode, 200, putFresh.body)
  for (const [worker, limit, leaseSeconds] of [
    ['crawler-stuck', 3, 60],
    ['crawler-ok', 5, 3600],
  ] as const) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/leases',
      payload: { worker, limit, leaseSeconds, hosts: ['leases.example'] },
    })
    assert.equal(res.json().pages.length, limit, res.body)
  }
  t.clock.advanceMs(2 * MS_PER_MINUTE)
  // One crawl in the current hour, a minute in: two minutes of it have passed.
  const now = await t.app.inject({
    method: 'POST',
    url: '/v1/observations',
    payload: { observations: [{ url: 'https://h00.example/0', crawledAt: iso(T0 + MS_PER_MINUTE), contentHash: 'n' }] },
  })
  assert.deepEqual(now.json().rejected, [], now.body)
}

async function hostRows(page: Page): Promise<string[][]> {
  return (await page.locator('#host-overview-table tbody tr').allInnerTexts()).map((r) => r.split('\t'))
}

/** Runs `action` and waits until the host view has loaded again. */
async function afterHostLoad(page: Page, action: () => Promise<void>): Promise<void> {
  const loads = (await page.evaluate(() => (globalThis as HostViewWindow).recrawlDashboard!.hostLoads ?? 0)) as number
  await action()
  await page.waitForFunction((n) => ((globalThis as HostViewWindow).recrawlDashboard!.hostLoads ?? 0) > n, loads, {
    timeout: 10_000,
  })
}

describe('host view in chromium', () => {
  it('shows one server page of hosts at a time, sorts on a heading click, pages, filters, and shows failures by kind', async (ctx) => {
    const browser = await launchChromium(ctx, 'the host view')
    if (!browser) return
    const t = await startTestApp({ statsCacheMs: 0 })
    try {
      await seed(t)
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
      const errors: string[] = []
      page.on('pageerror', (err) => errors.push(String(err)))
      const requests: string[] = []
      page.on('request', (r) => {
        if (r.url().includes('/v1/host-overview')) requests.push(r.url())
      })
      await page.goto(`${baseUrl}/`)
      await page.waitForFunction(() => (globalThis as HostViewWindow).recrawlDashboard?.ready === true, null, {
        timeout: 15_000,
      })

      let rows = await hostRows(page)
      assert.equal(rows.length, PER_VIEW, 'one view page of hosts, not all of them')
      assert.match(
        await page.locator('#hosts-range').innerText(),
        new RegExp(`^1–${PER_VIEW} of ${TOTAL_HOSTS} hosts$`),
      )
      assert.ok(requests.every((u) => new URL(u).searchParams.get('limit') === String(PER_VIEW)))
      // Default sort: most crawls in the last day first; the host with the most pages leads.
      assert.equal(rows[0]![0], hostName(HOSTS - 1))

      // The budget chart draws the unfinished current hour apart, as a rate over its two elapsed minutes.
      const budget = (await page.evaluate(`(() => {
        const u = globalThis.recrawlDashboard.plots['chart-budget']
        return { xs: Array.from(u.data[0]), series: u.series.map((s, i) => ({ label: s.label, ys: Array.from(u.data[i]) })) }
      })()`)) as { xs: number[]; series: { label: string; ys: (number | null | undefined)[] }[] }
      const at = budget.xs.indexOf(T0 / 1000)
      assert.ok(at >= 0, 'the current hour starts at T0')
      const ys = (label: string) => budget.series.find((x) => x.label === label)!.ys
      assert.equal(ys('crawled per hour × 24')[at], null, 'no full-hour step for the unfinished hour')
      assert.equal(ys('current hour so far (partial, per elapsed time)')[at], (1 * 3600 * 24) / 120)
      assert.equal(ys('crawled per hour × 24')[budget.xs.indexOf(T0 / 1000 - 3600)], 1830 * 24, 'the last full hour')

      // So does the by-status chart: each class's count of the unfinished hour, dashed, at its pace so far.
      const fetches = (await page.evaluate(`(() => {
        const u = globalThis.recrawlDashboard.plots['chart-fetches']
        return { xs: Array.from(u.data[0]), series: u.series.map((s, i) => ({ label: s.label, dash: s.dash ?? null, ys: Array.from(u.data[i]) })) }
      })()`)) as { xs: number[]; series: { label: string; dash: number[] | null; ys: (number | null | undefined)[] }[] }
      const byClass = (label: string) => fetches.series.find((x) => x.label === label)!
      const now = fetches.xs.indexOf(T0 / 1000)
      const lastFull = fetches.xs.indexOf(T0 / 1000 - 3600)
      assert.equal(byClass('2xx').ys[now], null, 'no full-hour step for the unfinished hour')
      // The last full hour: every page's crawl but h07's 8 (DNS) and h03's 4 (503).
      assert.equal(byClass('2xx').ys[lastFull], 1830 - 8 - 4)
      // The crawl of the current hour was reported without a status: one in two minutes, 30 an hour.
      const partial = byClass('no status: current hour so far (partial, per elapsed time)')
      assert.deepEqual(partial.dash, [4, 4])
      assert.equal(partial.ys[now], (1 * 3600) / 120)
      assert.equal(byClass('no status').ys[now], null)
      assert.equal(byClass('2xx: current hour so far (partial, per elapsed time)').ys[now], 0)

      // The allowance tile: 10,000 a day with a 2-hour burst holds hundreds of tokens, more than the overdue pages.
      const allowance = await page.locator('#allowance-tile').innerText()
      assert.match(allowance, /hand-out allowance: not limiting/)
      assert.equal(await page.locator('#allowance-tile.limited-tile').count(), 0)

      // The lease view: the worker holding pages past its lease stands out, first.
      const leaseRows = (await page.locator('#lease-overview-table tbody tr').allInnerTexts()).map((r) => r.split('\t'))
      assert.deepEqual(
        leaseRows.map((r) => r.slice(0, 4)),
        [
          ['crawler-stuck', '1', '3', '3 ⚠'],
          ['crawler-ok', '1', '5', '0'],
        ],
      )
      assert.equal(await page.locator('#lease-overview-table tr.bad[data-worker="crawler-stuck"]').count(), 1)
      assert.deepEqual(
        leaseRows.map((r) => r[4]),
        ['2 min', '2 min'],
        'both leases were taken two minutes ago',
      )
      assert.match(leaseRows[0]![5]!, /\(1 min ago\)$/)
      assert.match(leaseRows[1]![6]!, /\(in 58 min\)$/)
      assert.match(
        await page.locator('#lease-note').innerText(),
        /^2 workers hold leased pages; 1 hold pages past their lease \(neither reported nor given back in time\)$/,
      )

      await mkdir(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('dashboard-main.png', ARTIFACTS).pathname, fullPage: false })

      // The lease history: crawler-ok gives its lease back, a lease call returns crawler-stuck's expired pages.
      const held = (await t.app.inject({ method: 'GET', url: '/v1/pages?host=leases.example' })).json().pages as {
        lease: { leaseId: string; worker: string } | null
      }[]
      const okLease = held.find((p) => p.lease?.worker === 'crawler-ok')!.lease!.leaseId
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/leases/${okLease}` })).json().released, 5)
      const returning = await t.app.inject({
        method: 'POST',
        url: '/v1/leases',
        payload: { worker: 'crawler-next', limit: 1, hosts: ['nowhere.example'] },
      })
      assert.equal(returning.statusCode, 200, returning.body)
      const leaseLoads = (await page.evaluate(() => (globalThis as LeaseWindow).recrawlDashboard!.leases)) as unknown
      await page.selectOption('#window-hours', '6')
      await page.waitForFunction(
        (before) => {
          const leases = (globalThis as LeaseWindow).recrawlDashboard!.leases
          return leases !== before && leases?.history.length === 6
        },
        leaseLoads,
        { timeout: 10_000 },
      )
      const history = (await page.evaluate(`(() => {
        const u = globalThis.recrawlDashboard.plots['chart-lease-history']
        return { xs: Array.from(u.data[0]), series: u.series.map((s, i) => ({ label: s.label, ys: Array.from(u.data[i]) })) }
      })()`)) as { xs: number[]; series: { label: string; ys: (number | null | undefined)[] }[] }
      const line = (label: string) => history.series.find((x) => x.label === label)!.ys
      const current = history.xs.indexOf(T0 / 1000)
      assert.equal(history.xs[0], T0 / 1000 - 5 * 3600, 'six hours, the current one last')
      assert.equal(line('expired: current hour so far')[current], 3)
      assert.equal(line('given back: current hour so far')[current], 5)
      assert.deepEqual(line('expired unreported').slice(0, 5), [0, 0, 0, 0, 0])
      assert.deepEqual(line('given back').slice(0, 5), [0, 0, 0, 0, 0])
      assert.match(
        await page.locator('#lease-history-note').innerText(),
        /^In the last 6 hours: 3 leased pages expired without a report .*, 5 were given back by their workers\./,
      )
      assert.equal(
        await page.locator('#lease-overview-table tbody tr[data-worker]').count(),
        0,
        'no page is leased now',
      )

      await afterHostLoad(page, () => page.click('#host-overview-table th[data-sort="host"]'))
      rows = await hostRows(page)
      assert.deepEqual(
        rows.map((r) => r[0]),
        Array.from({ length: PER_VIEW }, (_, i) => hostName(i)),
      )
      assert.equal(await page.getAttribute('#host-overview-table th[data-sort="host"]', 'aria-sort'), 'ascending')
      const h07 = rows.find((r) => r[0] === 'h07.example')!
      assert.match(h07[9]!, /^24 \(timeout 16, DNS 8\)$/, 'failures without an HTTP status are failures, by kind')
      const h03 = rows.find((r) => r[0] === 'h03.example')!
      assert.match(h03[9]!, /^8 \(5xx 8\)$/)
      const h05 = rows.find((r) => r[0] === 'h05.example')!
      assert.match(h05[4]!, /capped/, 'a host whose plan reaches its cap is marked')
      assert.equal(h05[5], '0.5')
      assert.doesNotMatch(rows.find((r) => r[0] === 'h06.example')![4]!, /capped/)

      await afterHostLoad(page, () => page.click('#hosts-next'))
      rows = await hostRows(page)
      assert.equal(rows[0]![0], hostName(PER_VIEW))
      assert.match(await page.locator('#hosts-range').innerText(), new RegExp(`^26–50 of ${TOTAL_HOSTS} hosts$`))
      await afterHostLoad(page, () => page.click('#hosts-next'))
      rows = await hostRows(page)
      assert.equal(rows.length, TOTAL_HOSTS - 2 * PER_VIEW)
      assert.equal(await page.isDisabled('#hosts-next'), true)
      await afterHostLoad(page, () => page.click('#hosts-prev'))
      assert.equal((await hostRows(page))[0]![0], hostName(PER_VIEW))

      await page.fill('#host-prefix', 'h1')
      await afterHostLoad(page, () => page.click('#host-form button[type="submit"]'))
      rows = await hostRows(page)
      assert.deepEqual(
        rows.map((r) => r[0]),
        Array.from({ length: 10 }, (_, i) => hostName(10 + i)),
      )
      await page.fill('#host-prefix', '')
      await afterHostLoad(page, () => page.click('#host-form button[type="submit"]'))
      await afterHostLoad(page, () => page.click('#host-overview-table th[data-sort="failuresLastDay"]'))
      rows = await hostRows(page)
      assert.deepEqual(
        rows.slice(0, 2).map((r) => r[0]),
        ['h07.example', 'h03.example'],
      )
      await page.locator('#host-view').screenshot({ path: new URL('host-view.png', ARTIFACTS).pathname })
      assert.deepEqual(errors, [])
      await page.close()

      // The drill-down of a page whose last two fetches were 503s: operational facts before the estimates.
      const drill = await browser.newPage({ viewport: { width: 1000, height: 1000 } })
      const drillErrors: string[] = []
      drill.on('pageerror', (err) => drillErrors.push(String(err)))
      await drill.goto(`${baseUrl}/#page=${encodeURIComponent('https://h03.example/0')}`)
      await drill.waitForFunction(() => (globalThis as HostViewWindow).recrawlDashboard?.ready === true, null, {
        timeout: 15_000,
      })
      const terms = await drill.locator('#page-summary dt').allInnerTexts()
      const values = await drill.locator('#page-summary dd').allInnerTexts()
      assert.deepEqual(terms.slice(0, 6), [
        'status',
        'last HTTP status',
        'consecutive failures',
        'redirect target',
        'lease',
        'noisy',
      ])
      assert.deepEqual(values.slice(0, 6), ['failing', '503', '2', '–', '–', 'no'])
      assert.ok(terms.indexOf('changes/day') > 5, 'the estimates come after the operational facts')
      await drill.waitForSelector('#estimators-table tbody tr')
      // Nothing spills out of its panel: a wide table scrolls inside it.
      const overflowing = (await drill.evaluate(`Array.from(document.querySelectorAll('.panel'))
        .filter((p) => p.scrollWidth > p.clientWidth + 1)
        .map((p) => p.id || p.querySelector('figcaption, h2')?.textContent || '?')`)) as string[]
      assert.deepEqual(overflowing, [])

      // The page list: server-side filters, a row opens its drill-down, bulk actions confirm with the count.
      const listLoaded = async (action: () => Promise<void>) => {
        const n = (await drill.evaluate(
          () => (globalThis as PageListWindow).recrawlDashboard!.pageListLoads ?? 0,
        )) as number
        await action()
        await drill.waitForFunction(
          (m) => ((globalThis as PageListWindow).recrawlDashboard!.pageListLoads ?? 0) > m,
          n,
          {
            timeout: 10_000,
          },
        )
      }
      await drill.selectOption('#pages-status', 'failing')
      await listLoaded(() => drill.click('#pages-form button[type="submit"]'))
      const listed = await drill
        .locator('#page-list-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-url')!))
      assert.equal(listed.length, 12, 'the 8 pages of h07 and the 4 of h03 are failing')
      assert.ok(listed.every((u) => u.startsWith('https://h07.example/') || u.startsWith('https://h03.example/')))
      await drill.click(`#page-list-table tbody tr[data-url="${listed[0]}"]`)
      await drill.waitForFunction((u) => (globalThis as PageListWindow).recrawlDashboard!.page?.url === u, listed[0], {
        timeout: 10_000,
      })

      const dialogs: string[] = []
      drill.on('dialog', (d) => {
        dialogs.push(d.message())
        void d.accept()
      })
      await drill.selectOption('#pages-status', '')
      await drill.fill('#pages-prefix', 'https://leases.example/')
      await listLoaded(() => drill.click('#pages-form button[type="submit"]'))
      assert.equal(await drill.locator('#page-list-table tbody tr').count(), 8)
      await drill.fill('#bulk-importance', '3')
      await listLoaded(() => drill.click('#bulk-update'))
      assert.deepEqual(dialogs, ['Set importance = 3 on 8 pages?'])
      assert.equal(await drill.locator('#bulk-result').innerText(), 'updated 8 pages')
      const imps = await drill.locator('#page-list-table tbody tr td:nth-child(5)').allInnerTexts()
      assert.deepEqual(imps, Array(8).fill('3'))
      await listLoaded(() => drill.click('#bulk-delete'))
      assert.equal(dialogs[1], 'Delete 8 pages?')
      assert.equal(await drill.locator('#page-list-table tbody tr').count(), 0)
      const left = await t.app.inject({ method: 'GET', url: '/v1/pages?host=leases.example' })
      assert.deepEqual(left.json().pages, [], 'the bulk delete reached the service')
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v1/pages?host=h59.example&limit=1000' })).json().pages.length,
        60,
        'pages outside the filter stay',
      )
      assert.deepEqual(drillErrors, [])
      await drill.close()
    } finally {
      await browser.close()
      await t.close()
    }
  })
})
