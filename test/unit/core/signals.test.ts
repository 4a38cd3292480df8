/**
 * Change signals (src/core/signals.ts and applySignal in src/core/pageStep.ts): how crawls judge signals, the trust
 * learned from them against the truth, and what a signal does to its page's due time.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../../src/math/units.ts'
import { borrowedBetaPosterior, MAX_BORROWED_TRIALS } from '../../../src/math/betaPosterior.ts'
import { NO_SIGNAL_COVER, periodicMarginalCrawlValue, signalPullNetWorth } from '../../../src/math/signalRates.ts'
import {
  addTrustCounts,
  changeProbabilityGivenSignal,
  emptyTrustCounts,
  hostSignalCover,
  judgeSignals,
  MIN_JUDGED_SIGNALS,
  signalCoverOf,
  signalInformativeShare,
  trustOf,
  type TrustCounts,
} from '../../../src/core/signals.ts'
import {
  applySignal,
  newPageState,
  scheduledChangeProbability,
  signalPullNetWorthFor,
  stepContext,
  type PageState,
} from '../../../src/core/pageStep.ts'
import { DEFAULT_SETTINGS } from '../../../src/core/settings.ts'

const T0 = Date.UTC(2026, 10, 1)

describe('judgeSignals', () => {
  test('a crawl judges the signals dated before it, counts towards the change rate of every source on the host, and a change towards their recall', () => {
    const pending = [
      { source: 'sitemap', signalledAtMs: T0 - MS_PER_HOUR },
      { source: 'ping', signalledAtMs: T0 + MS_PER_HOUR },
    ]
    const changed = judgeSignals(pending, T0, true, ['sitemap', 'ping', 'feed'])
    assert.deepEqual(changed.stillPending, [pending[1]])
    assert.deepEqual(changed.increments.get('sitemap'), {
      signalsJudged: 1,
      signalsConfirmed: 1,
      changesSeen: 1,
      changesSignalled: 1,
      crawlsJudged: 1,
    })
    // ping's signal came after the crawl: not judged, and the change was not signalled by it.
    assert.deepEqual(changed.increments.get('ping'), {
      signalsJudged: 0,
      signalsConfirmed: 0,
      changesSeen: 1,
      changesSignalled: 0,
      crawlsJudged: 1,
    })
    assert.equal(changed.increments.get('feed')!.changesSeen, 1)

    const unchanged = judgeSignals(pending, T0, false, ['sitemap', 'ping'])
    assert.deepEqual(unchanged.increments.get('sitemap'), {
      signalsJudged: 1,
      signalsConfirmed: 0,
      changesSeen: 0,
      changesSignalled: 0,
      crawlsJudged: 1,
    })
    // A crawl that saw no change still counts towards the change rate of every source on the host.
    assert.deepEqual(unchanged.increments.get('ping'), { ...emptyTrustCounts(), crawlsJudged: 1 })
    assert.equal(judgeSignals([], T0, false, []).increments.size, 0)
  })
})

/** A host's truth: how often a crawl interval changes, and how the source signals. */
interface Profile {
  name: string
  changeProbability: number
  /** P(signalled | changed). */
  recall: number
  /** P(signalled | not changed). */
  falsePositive: number
}

/** Runs crawl intervals on one host until `signals` signals were judged; returns the counts. */
function learn(profile: Profile, signals: number, seed: number): TrustCounts {
  const random = createRandom(seed)
  const counts = emptyTrustCounts()
  let at = T0
  while (counts.signalsJudged < signals) {
    const changed = random.next() < profile.changeProbability
    const signalled = random.next() < (changed ? profile.recall : profile.falsePositive)
    const pending = signalled ? [{ source: 's', signalledAtMs: at + MS_PER_HOUR }] : []
    at += MS_PER_DAY
    const verdict = judgeSignals(pending, at, changed, ['s'])
    addTrustCounts(counts, verdict.increments.get('s') ?? emptyTrustCounts())
  }
  return counts
}

const truePrecision = (p: Profile) =>
  (p.changeProbability * p.recall) / (p.changeProbability * p.recall + (1 - p.changeProbability) * p.falsePositive)

describe('trust learned per source and host', () => {
  const profiles: Profile[] = [
    { name: 'accurate', changeProbability: 0.4, recall: 0.95, falsePositive: 0.02 },
    { name: 'partial recall', changeProbability: 0.4, recall: 0.5, falsePositive: 0.02 },
    { name: 'false positives', changeProbability: 0.3, recall: 0.9, falsePositive: 0.4 },
    { name: 'lastmod is the build time', changeProbability: 0.2, recall: 1, falsePositive: 1 },
  ]
  /** The source's other hosts, as Bing found sitemaps (2023): 79 % accurate, 18 % lastmod = build time, 3 % partial. */
  const realisticOthers = (seed: number) => {
    const fleet = emptyTrustCounts()
    addTrustCounts(fleet, learn(profiles[0]!, 790, seed))
    addTrustCounts(fleet, learn(profiles[3]!, 180, seed + 1))
    addTrustCounts(fleet, learn(profiles[1]!, 30, seed + 2))
    return fleet
  }
  for (const profile of profiles) {
    test(`${profile.name}: precision and recall within ±0.05 of the truth after 200 judged signals`, () => {
      for (const seed of [1, 2, 3]) {
        const host = learn(profile, 200, seed)
        const fleet = { ...host }
        addTrustCounts(fleet, realisticOthers(100 + seed))
        const trust = trustOf(host, fleet)
        // ±0.05, or two standard errors of 200 draws where the proportion is near 1/2 (0.035 there): no estimator
        // meets ±0.05 reliably from 200 draws of a proportion of 0.5.
        const tolerance = (p: number, n: number) => Math.max(0.05, 2 * Math.sqrt((p * (1 - p)) / n))
        assert.ok(
          Math.abs(trust.precision.mean - truePrecision(profile)) <= tolerance(truePrecision(profile), 200),
          `precision ${trust.precision.mean} vs ${truePrecision(profile)} (seed ${seed})`,
        )
        assert.ok(
          Math.abs(trust.recall.mean - profile.recall) <= tolerance(profile.recall, host.changesSeen),
          `recall ${trust.recall.mean} vs ${profile.recall} (seed ${seed})`,
        )
      }
    })
  }

  test('the informative share: (precision bound − change rate) / (1 − change rate); near 1 for an accurate source, 0 for a build-time sitemap', () => {
    const shares = profiles.map((profile) => {
      const host = learn(profile, 400, 5)
      const trust = trustOf(host, host)
      const expected = Math.min(
        1,
        Math.max(0, (trust.precision.lower - trust.changeRate.mean) / (1 - trust.changeRate.mean)),
      )
      assert.ok(Math.abs(signalInformativeShare(trust) - expected) < 1e-15)
      // The change rate is what the crawls saw, signalled or not.
      assert.ok(Math.abs(trust.changeRate.mean - profile.changeProbability) < 0.05, profile.name)
      return signalInformativeShare(trust)
    })
    // The truth: κ = (P(changed | signal) − π)/(1 − π); the lower bound of the precision puts the learned share a
    // little below it (400 judged signals), never above.
    profiles.forEach((profile, i) => {
      const pi = profile.changeProbability
      const truth = Math.max(0, (truePrecision(profile) - pi) / (1 - pi))
      assert.ok(shares[i]! <= truth + 0.02 && shares[i]! >= truth - 0.12, `${profile.name}: ${shares[i]} vs ${truth}`)
    })
    assert.equal(shares[3], 0)
    assert.equal(signalInformativeShare(trustOf(emptyTrustCounts(), emptyTrustCounts())), 0)
  })

  test('borrowing never outweighs a host: with every other host lying, an accurate host is still within ±0.1', () => {
    const others = learn(profiles[3]!, 2000, 99)
    for (const seed of [1, 2, 3]) {
      const host = learn(profiles[0]!, 200, seed)
      const fleet = { ...host }
      addTrustCounts(fleet, others)
      const mean = trustOf(host, fleet).precision.mean
      assert.ok(Math.abs(mean - truePrecision(profiles[0]!)) <= 0.1, `${mean} (seed ${seed})`)
    }
  })

  test('a host with no evidence of its own takes the source’s other hosts’ figures, with bounded weight', () => {
    const fleet = { ...emptyTrustCounts(), signalsJudged: 1000, signalsConfirmed: 900 }
    const trust = trustOf(emptyTrustCounts(), fleet)
    // Between the uniform prior's 1/2 and the fleet's 0.9, nearer the fleet.
    assert.ok(trust.precision.mean > 0.8 && trust.precision.mean < 0.9, String(trust.precision.mean))
    assert.equal(trust.precision.evidence, MAX_BORROWED_TRIALS)
    // The host's own figures win once it has its own evidence.
    const own = { ...emptyTrustCounts(), signalsJudged: 300, signalsConfirmed: 30 }
    const mixed = trustOf(own, { ...fleet, signalsJudged: 1300, signalsConfirmed: 930 })
    assert.ok(mixed.precision.mean < 0.2, String(mixed.precision.mean))
  })

  test('an untrusted source (no evidence, or few judged signals) is worth nothing to the schedule', () => {
    assert.equal(changeProbabilityGivenSignal(trustOf(emptyTrustCounts(), emptyTrustCounts())), 0)
    const few = {
      ...emptyTrustCounts(),
      signalsJudged: MIN_JUDGED_SIGNALS - 1,
      signalsConfirmed: MIN_JUDGED_SIGNALS - 1,
    }
    assert.equal(changeProbabilityGivenSignal(trustOf(few, few)), 0)
    const many = { ...emptyTrustCounts(), signalsJudged: 100, signalsConfirmed: 95 }
    const p = changeProbabilityGivenSignal(trustOf(many, many))
    assert.ok(p > 0.85 && p < 0.95, String(p))
  })

  test('the lower bound is below the mean and tightens with evidence', () => {
    const small = borrowedBetaPosterior({ hits: 8, trials: 10 }, { hits: 0, trials: 0 })
    const large = borrowedBetaPosterior({ hits: 800, trials: 1000 }, { hits: 0, trials: 0 })
    assert.ok(small.lower < small.mean && large.lower < large.mean)
    assert.ok(large.mean - large.lower < small.mean - small.lower)
  })
})

describe('applySignal', () => {
  const ctx = stepContext(DEFAULT_SETTINGS, { lambda: null, hostLambdas: {}, pages: 100 }, T0, createRandom(1))
  /** The context of a solve whose multiplier is λ. */
  const withLambda = (lambda: number) =>
    stepContext(DEFAULT_SETTINGS, { lambda, hostLambdas: {}, pages: 100 }, T0, createRandom(1))
  /** A page crawled 12 hours ago, changing about once in 10 days, crawled once a day: due in 12 hours. */
  const crawled = (fields: Partial<PageState> = {}): PageState => ({
    ...newPageState({ host: 'a.example' }, T0),
    crawls: 5,
    intervals: 4,
    lastCrawledAtMs: T0 - 12 * MS_PER_HOUR,
    intervalStartAtMs: T0 - 12 * MS_PER_HOUR,
    changesPerDay: 0.1,
    crawlsPerDay: 1,
    nextCrawlAtMs: T0 + 12 * MS_PER_HOUR,
    ...fields,
  })
  const signal = { signalledAtMs: T0 - MS_PER_HOUR, pageLeased: false }

  test('the net worth of a pull is the formula of docs/math.md 5.3 with the page’s chance given the signal', () => {
    const page = crawled({ importance: 2 })
    const kappa = 0.6
    const p = kappa + (1 - kappa) * (1 - Math.exp(-0.1 * 0.5))
    const expected = (lambda: number) =>
      signalPullNetWorth({
        importance: 2,
        changesPerDay: 0.1,
        crawlsPerDay: 1,
        daysUntilDue: 0.5,
        changedProbability: p,
        marginalCrawlValue: lambda,
        spacing: 'periodic',
      })
    assert.ok(Math.abs(signalPullNetWorthFor(page, kappa, withLambda(0.3)) - expected(0.3)) < 1e-12)
    // Without a multiplier (before the first solve) the page's own marginal crawl value stands in for λ.
    assert.ok(
      Math.abs(signalPullNetWorthFor(page, kappa, ctx) - expected(periodicMarginalCrawlValue(2, 0.1, 1))) < 1e-12,
    )
  })

  test('a signal from a source that tells something makes the page due now; its rate is kept', () => {
    const step = applySignal(crawled(), signal, 0.8, ctx)
    assert.deepEqual(step, { effect: 'pulled', nextCrawlAtMs: T0 })
  })

  test('a signal that tells nothing (κ = 0: a sitemap whose lastmod is its build time) never pulls', () => {
    for (const fields of [{}, { changesPerDay: 0.01 }, { changesPerDay: 5 }, { nextCrawlAtMs: T0 + 1000 }]) {
      assert.equal(applySignal(crawled(fields), signal, 0, ctx).effect, 'notWorth')
      assert.equal(applySignal(crawled(fields), signal, 0, withLambda(1e-6)).effect, 'notWorth')
    }
  })

  test('the budget decides: a page whose crawl is worth less than the budget’s marginal crawl is not pulled, even by a certain signal', () => {
    // A pull 12 hours early costs half a crawl (λ/2) and buys μ·f·d = 0.5 × 0.95 × 0.5 fresh days: worth it below λ ≈ 0.48.
    const page = crawled({ importance: 0.5 })
    assert.equal(applySignal(page, signal, 1, withLambda(0.1)).effect, 'pulled')
    assert.equal(applySignal(page, signal, 1, withLambda(2)).effect, 'notWorth')
    // A more important page is worth it at the same multiplier.
    assert.equal(applySignal(crawled({ importance: 50 }), signal, 1, withLambda(2)).effect, 'pulled')
  })

  test('a claimed change no newer than the content last seen is stale; leased, due and failing pages keep their time', () => {
    const page = crawled()
    assert.equal(applySignal(page, { ...signal, signalledAtMs: T0 - MS_PER_DAY }, 0.99, ctx).effect, 'stale')
    assert.equal(applySignal(page, { ...signal, pageLeased: true }, 0.99, ctx).effect, 'alreadyDue')
    assert.equal(applySignal(crawled({ nextCrawlAtMs: T0 - 1 }), signal, 0.99, ctx).effect, 'alreadyDue')
    assert.equal(applySignal(crawled({ status: 'failing' }), signal, 0.99, ctx).effect, 'notActive')
    assert.equal(applySignal(crawled({ status: 'gone' }), signal, 0.99, ctx).effect, 'notActive')
  })
})

describe('signalCoverOf', () => {
  /** Counts of a host where 40 % of the crawls saw a change, unless `crawls` says otherwise. */
  const counts = (
    judged: number,
    confirmed: number,
    seen: number,
    signalled: number,
    crawls = seen / 0.4,
  ): TrustCounts => ({
    signalsJudged: judged,
    signalsConfirmed: confirmed,
    changesSeen: seen,
    changesSignalled: signalled,
    crawlsJudged: crawls,
  })
  test('a reliable source covers the share of changes its recall’s lower bound vouches for', () => {
    const host = counts(300, 299, 400, 300)
    const trust = trustOf(host, host)
    const cover = signalCoverOf(trust)
    assert.equal(cover.share, trust.recall.lower)
    assert.ok(cover.share > 0.65 && cover.share < 0.75, String(cover.share))
    assert.equal(cover.precision, changeProbabilityGivenSignal(trust))
  })
  test('a noisy source (half its signals false) covers nothing: its host is scheduled as if it sent none', () => {
    const host = counts(300, 150, 300, 300)
    assert.deepEqual(signalCoverOf(trustOf(host, host)), NO_SIGNAL_COVER)
  })
  test('a sitemap whose lastmod is its build time covers nothing, even where almost every crawl finds a change', () => {
    // Every crawl judges a signal and 95 % of them see a change: the precision passes 0.9, the signals tell nothing.
    const host = counts(1000, 950, 950, 950, 1000)
    const trust = trustOf(host, host)
    assert.ok(changeProbabilityGivenSignal(trust) >= 0.9)
    assert.deepEqual(signalCoverOf(trust), NO_SIGNAL_COVER)
  })
  test('a source known from few crawls covers nothing, however good they were', () => {
    const host = counts(3, 3, 3, 3)
    assert.deepEqual(signalCoverOf(trustOf(host, host)), NO_SIGNAL_COVER)
  })
  test('a host takes the cover of its best source', () => {
    const good = trustOf(counts(300, 299, 400, 300), counts(300, 299, 400, 300))
    const partial = trustOf(counts(300, 299, 400, 100), counts(300, 299, 400, 100))
    assert.equal(hostSignalCover([partial, good]).share, signalCoverOf(good).share)
    assert.deepEqual(hostSignalCover([]), NO_SIGNAL_COVER)
  })
})

describe('a cover in the schedule', () => {
  const settings = { ...DEFAULT_SETTINGS }
  const optimizer = { lambda: null, hostLambdas: {}, pages: 1 }
  const page = { host: 'a.example', importance: 1, minCrawlsPerDay: null, maxCrawlsPerDay: null }
  const cover = { share: 0.9, precision: 0.95 }
  const chance = (changesPerDay: number, plainLambda: number | null) =>
    scheduledChangeProbability(
      { ...page, changesPerDay, crawlsPerDay: 0.5 },
      stepContext(
        settings,
        plainLambda === null
          ? optimizer
          : { ...optimizer, signalCover: { plainLambda, hosts: { 'a.example': cover } } },
        T0,
        createRandom(1),
      ),
    )
  test('a page its signals take over counts only its uncovered changes, so a signal pulls it sooner', () => {
    assert.ok(Math.abs(chance(1, null) - (1 - Math.exp(-2))) < 1e-12)
    // A small multiplier: without signals the page would be crawled more often than its signals would cost.
    assert.ok(Math.abs(chance(1, 1e-4) - (1 - Math.exp(-0.2))) < 1e-12)
  })
  test('a page changing faster than it is worth crawling keeps its schedule: its signals would cost too much', () => {
    // A large multiplier: without signals the page gets its floor, less than its signals would cost.
    assert.equal(chance(20, 1e3), chance(20, null))
  })
})
