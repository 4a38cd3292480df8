import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import type { Random } from '../../../src/math/random.ts'
import {
  currentRate,
  duaneFit,
  duaneRate,
  duaneSlope,
  fitPowerLaw,
  lambdaBar,
  localisedRate,
  rateHistory,
  segmentHistory,
  selectWindow,
  updatePointsFromCrawls,
} from '../../../src/math/nhpp.ts'
import type { CrawlChange } from '../../../src/math/nhpp.ts'

/** Power-law NHPP by inverse transform: Λ(t) = (t/η)^β, so t_i = η·E_i^{1/β} with E_i cumulative Exp(1). */
function simulatePowerLaw(random: Random, beta: number, etaDays: number, n: number): number[] {
  let cumulative = 0
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    cumulative += random.exponential(1)
    times.push(etaDays * Math.pow(cumulative, 1 / beta))
  }
  return times
}

/** Piecewise-constant Poisson process on (0, endDays]. */
function simulatePiecewise(
  random: Random,
  segments: readonly { untilDays: number; changesPerDay: number }[],
): number[] {
  const times: number[] = []
  let start = 0
  for (const { untilDays, changesPerDay } of segments) {
    let t = start
    for (;;) {
      t += random.exponential(changesPerDay)
      if (t > untilDays) break
      times.push(t)
    }
    start = untilDays
  }
  return times
}

function trueIntensity(beta: number, etaDays: number, tDays: number): number {
  return (beta / etaDays) * Math.pow(tDays / etaDays, beta - 1)
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length

test('fitPowerLaw: exact MLE on hand-computed cases', () => {
  // t = 1, 2, 4: Σ ln(4/t_i) = ln 4 + ln 2 = 3 ln 2, β̂ = 3 / (3 ln 2) = 1/ln 2, η̂ = 4 / 3^{ln 2}.
  const three = fitPowerLaw([1, 2, 4], 0)
  assert.ok(three)
  assert.ok(Math.abs(three.beta - 1 / Math.LN2) < 1e-12)
  assert.ok(Math.abs(three.eta - 4 / Math.pow(3, Math.LN2)) < 1e-12)
  assert.equal(three.betaCorrected, null)
  assert.equal(three.n, 3)
  assert.equal(three.windowEndDays, 4)
  // Uncorrected intensity for n ≤ 3: n β̂ t^{β̂−1} / t_n^{β̂} at t = 2 is 3 β̂ 2^{β̂−1} / 4^{β̂}.
  const b = 1 / Math.LN2
  assert.ok(Math.abs(localisedRate(three, 2)! - (3 * b * Math.pow(2, b - 1)) / Math.pow(4, b)) < 1e-12)

  // Window start at 10: t = 11, 12, 13, 14 → elapsed 1..4. Σ ln(4/t_i) = ln(32/3).
  const four = fitPowerLaw([14, 12, 11, 13, 9, 10], 10)
  assert.ok(four)
  assert.equal(four.n, 4)
  const betaHat = 4 / Math.log(32 / 3)
  const betaTilde = (2 / 4) * betaHat
  assert.ok(Math.abs(four.beta - betaHat) < 1e-12)
  assert.ok(Math.abs(four.betaCorrected! - betaTilde) < 1e-12)
  // λ̌(t) = (n−3)/(n−2) · n β̃ t^{β̃−1} / t_n^{β̃}; at t = t_n = 4: (1/2) · 4 β̃ / 4 = β̃ / 2.
  assert.ok(Math.abs(localisedRate(four, 14)! - betaTilde / 2) < 1e-12)
  // At t = 2 (day 12): (1/2) · 4 β̃ 2^{β̃−1} / 4^{β̃}.
  assert.ok(
    Math.abs(localisedRate(four, 12)! - (0.5 * 4 * betaTilde * Math.pow(2, betaTilde - 1)) / Math.pow(4, betaTilde)) <
      1e-12,
  )

  // Time truncation at T = 5: β̂ = n / Σ ln(T/t_i), β̃ = (n−1)/n β̂, λ̌(T) = n β̃ / T.
  const timed = fitPowerLaw([1, 2, 3, 4], 0, { observedUntilDays: 5 })
  assert.ok(timed)
  assert.equal(timed.truncation, 'time')
  const sum = Math.log(5) * 4 - Math.log(24)
  assert.ok(Math.abs(timed.beta - 4 / sum) < 1e-12)
  assert.ok(Math.abs(timed.betaCorrected! - (3 / 4) * (4 / sum)) < 1e-12)
  assert.ok(Math.abs(localisedRate(timed, 5)! - (4 * timed.betaCorrected!) / 5) < 1e-12)
})

test('fitPowerLaw recovers β and η: 400 points, single run |β̃/β − 1| < 0.12, mean over 20 runs within 4 %', () => {
  // β̂ has relative standard error ≈ 1/√n = 5 % with 400 points. ln η̂ = ln t_n − ln n / β̂ carries
  // that error multiplied by ln n / β: its standard deviation is ≈ ln n / (β √n) (0.6 for β = 0.5),
  // so the mean of ln(η̂/η) over 20 runs is held to 3 standard errors of that mean.
  for (const beta of [0.5, 1, 2]) {
    const etaDays = 10
    const betas: number[] = []
    const etas: number[] = []
    for (let run = 0; run < 20; run++) {
      const fit = fitPowerLaw(simulatePowerLaw(createRandom(100 * run + 7), beta, etaDays, 400), 0)
      assert.ok(fit)
      betas.push(fit.betaCorrected!)
      etas.push(fit.eta)
    }
    assert.ok(Math.abs(betas[0]! / beta - 1) < 0.12, `β=${beta}: single-run β̃ ${betas[0]}`)
    assert.ok(Math.abs(mean(betas) / beta - 1) < 0.04, `β=${beta}: mean β̃ ${mean(betas)}`)
    const meanLogEtaError = mean(etas.map((eta) => Math.log(eta / etaDays)))
    const standardError = Math.log(400) / (beta * Math.sqrt(400) * Math.sqrt(20))
    assert.ok(Math.abs(meanLogEtaError) < 3 * standardError, `β=${beta}: mean ln(η̂/η) ${meanLogEtaError}`)
  }
})

test('fitPowerLaw: bias-corrected β̃ is closer on average (β = 1.5, n = 8, 3000 samples: E[β̂] = nβ/(n−2) = 2.0)', () => {
  const beta = 1.5
  const hats: number[] = []
  const corrected: number[] = []
  for (let run = 0; run < 3000; run++) {
    const fit = fitPowerLaw(simulatePowerLaw(createRandom(5000 + run), beta, 2, 8), 0)
    assert.ok(fit)
    hats.push(fit.beta)
    corrected.push(fit.betaCorrected!)
  }
  const meanHat = mean(hats)
  const meanCorrected = mean(corrected)
  assert.ok(Math.abs(meanHat - 2.0) < 0.06, `mean β̂ ${meanHat}`)
  assert.ok(Math.abs(meanCorrected - beta) < 0.05, `mean β̃ ${meanCorrected}`)
  assert.ok(Math.abs(meanCorrected - beta) < Math.abs(meanHat - beta) / 4)
})

test('localisedRate ≈ true intensity at the end of the window (300 points, mean ratio over 20 runs within 6 %)', () => {
  for (const beta of [0.5, 1, 2]) {
    const ratios: number[] = []
    for (let run = 0; run < 20; run++) {
      const times = simulatePowerLaw(createRandom(900 + run), beta, 10, 300)
      const fit = fitPowerLaw(times, 0)
      assert.ok(fit)
      const end = times[times.length - 1]!
      ratios.push(localisedRate(fit, end)! / trueIntensity(beta, 10, end))
    }
    assert.ok(Math.abs(mean(ratios) - 1) < 0.06, `β=${beta}: mean λ̌/λ ${mean(ratios)}`)
  }
})

test('homogeneous Poisson (3 changes/day, 300 days): β ≈ 1 (±0.1), trend constant, λ̌ ≈ 3 (±12 %)', () => {
  const times = simulatePiecewise(createRandom(42), [{ untilDays: 300, changesPerDay: 3 }])
  const fit = fitPowerLaw(times, 0)
  assert.ok(fit)
  assert.ok(Math.abs(fit.betaCorrected! - 1) < 0.1, `β̃ ${fit.betaCorrected}`)
  assert.equal(fit.trend, 'constant')
  const rate = localisedRate(fit, times[times.length - 1]!)!
  assert.ok(Math.abs(rate / 3 - 1) < 0.12, `λ̌ ${rate}`)
})

test('trend: rising for β = 2, falling for β = 0.5 (300 points)', () => {
  assert.equal(fitPowerLaw(simulatePowerLaw(createRandom(3), 2, 10, 300), 0)!.trend, 'rising')
  assert.equal(fitPowerLaw(simulatePowerLaw(createRandom(3), 0.5, 10, 300), 0)!.trend, 'falling')
})

test('duaneSlope ≈ 1 − β (400 points, mean over 20 runs within 0.1)', () => {
  for (const beta of [0.5, 1, 2]) {
    const slopes: number[] = []
    for (let run = 0; run < 20; run++) {
      slopes.push(duaneSlope(simulatePowerLaw(createRandom(300 + run), beta, 10, 400), 0)!)
    }
    assert.ok(Math.abs(mean(slopes) - (1 - beta)) < 0.1, `β=${beta}: mean slope ${mean(slopes)}`)
  }
  assert.equal(duaneSlope([1, 2], 0), null)
  assert.equal(duaneSlope([5, 5, 5], 0), null)
})

test('selectWindow after a rate jump (1/day for 100 days, then 5/day for 40 days; 60 runs): window after the jump, rate ≈ 5', () => {
  // Measured: under 2 % of window points fall before the jump on average; mean |λ̌/5 − 1| ≈ 0.11.
  const contamination: number[] = []
  const errors: number[] = []
  for (let run = 0; run < 60; run++) {
    const times = simulatePiecewise(createRandom(2000 + run), [
      { untilDays: 100, changesPerDay: 1 },
      { untilDays: 140, changesPerDay: 5 },
    ])
    const window = selectWindow(times, { originDays: 0 })
    assert.ok(window)
    const inWindow = times.slice(window.startIndex)
    assert.ok(inWindow.length >= 4)
    contamination.push(inWindow.filter((t) => t < 100).length / inWindow.length)
    errors.push(Math.abs(localisedRate(window.fit, 140)! / 5 - 1))
  }
  assert.ok(mean(contamination) < 0.05, `mean share of pre-jump points ${mean(contamination)}`)
  assert.ok(mean(errors) < 0.15, `mean relative error ${mean(errors)}`)
  // Fitting the whole history instead mixes both rates.
  const times = simulatePiecewise(createRandom(2000), [
    { untilDays: 100, changesPerDay: 1 },
    { untilDays: 140, changesPerDay: 5 },
  ])
  const whole = fitPowerLaw(times, 0)!
  assert.equal(whole.trend, 'rising')
})

test('selectWindow keeps a long window on a homogeneous process and on a smooth power law', () => {
  const hpp = simulatePiecewise(createRandom(77), [{ untilDays: 100, changesPerDay: 2 }])
  const window = selectWindow(hpp, { originDays: 0 })
  assert.ok(window)
  assert.ok(
    hpp.length - window.startIndex > hpp.length / 2,
    `window ${hpp.length - window.startIndex} of ${hpp.length}`,
  )
  assert.equal(window.fit.trend, 'constant')
  // minimum window and too few points
  assert.equal(selectWindow([1, 2, 3]), null)
  assert.equal(selectWindow([1, 2, 3, 4]), null) // without an origin the first point only starts the window
  const small = selectWindow([1, 2, 3, 4], { originDays: 0 })
  assert.ok(small)
  assert.equal(small.startIndex, 0)
  assert.equal(small.fit.n, 4)
})

test('updatePointsFromCrawls: Last-Modified inside the interval, else midpoint of a changed interval', () => {
  const crawls: CrawlChange[] = [
    { atDays: 0, changed: null, lastModifiedDays: -3 }, // first crawl: no interval
    { atDays: 2, changed: true, lastModifiedDays: 1.5 }, // Last-Modified inside (0, 2]
    { atDays: 4, changed: true, lastModifiedDays: 1.5 }, // stale Last-Modified: midpoint 3
    { atDays: 6, changed: false, lastModifiedDays: 1.5 },
    { atDays: 8, changed: null, lastModifiedDays: 7 }, // unknown flag, but Last-Modified says it changed
    { atDays: 10, changed: null, lastModifiedDays: null },
    { atDays: 12, changed: true, lastModifiedDays: null }, // midpoint 11
  ]
  assert.deepEqual(updatePointsFromCrawls([...crawls].reverse()), [1.5, 3, 7, 11])
})

function crawlHistory(
  changeTimes: readonly number[],
  intervalDays: number,
  endDays: number,
  withLastModified: boolean,
): CrawlChange[] {
  const crawls: CrawlChange[] = []
  let next = 0
  for (let at = 0; at <= endDays; at += intervalDays) {
    let last: number | null = null
    while (next < changeTimes.length && changeTimes[next]! <= at) last = changeTimes[next++]!
    crawls.push({
      atDays: at,
      changed: crawls.length === 0 ? null : last !== null,
      lastModifiedDays: withLastModified ? last : null,
    })
  }
  return crawls
}

test('currentRate from crawls (changes 0.5/day, crawl every 0.2 days for 400 days; 10 runs): mean within 10 %', () => {
  // One point per interval loses 1 − (1 − e^{−0.1})/0.1 ≈ 5 % of the changes; λ̌ at the window end
  // has a relative standard deviation near 2/√n ≈ 15 % for n ≈ 190 points, hence the average.
  for (const withLastModified of [true, false]) {
    const rates: number[] = []
    for (let run = 0; run < 10; run++) {
      const changes = simulatePiecewise(createRandom(11 + run), [{ untilDays: 400, changesPerDay: 0.5 }])
      const rate = currentRate(crawlHistory(changes, 0.2, 400, withLastModified), 400)
      assert.ok(rate)
      assert.ok(Math.abs(rate.changesPerDay / 0.5 - 1) < 0.4, `LM=${withLastModified}: ${rate.changesPerDay}`)
      rates.push(rate.changesPerDay)
    }
    assert.ok(Math.abs(mean(rates) / 0.5 - 1) < 0.1, `LM=${withLastModified}: mean ${mean(rates)}`)
  }
})

test('currentRate follows a rate drop (2/day for 200 days, then 0.2/day for 200 days; 10 runs): mean within 25 %', () => {
  // About 40 points after the drop, so a single run's λ̌(now) scatters by ~30 %.
  const rates: number[] = []
  const starts: number[] = []
  for (let run = 0; run < 10; run++) {
    const changes = simulatePiecewise(createRandom(12 + run), [
      { untilDays: 200, changesPerDay: 2 },
      { untilDays: 400, changesPerDay: 0.2 },
    ])
    const rate = currentRate(crawlHistory(changes, 0.05, 400, true), 400)
    assert.ok(rate)
    rates.push(rate.changesPerDay)
    starts.push(rate.windowStartDays)
  }
  assert.ok(Math.abs(mean(rates) / 0.2 - 1) < 0.25, `mean rate ${mean(rates)}`)
  assert.ok(starts.filter((s) => s > 150).length >= 8, `window starts ${starts.map((s) => s.toFixed(0)).join(' ')}`)
})

test('degenerate inputs give null or finite numbers', () => {
  assert.equal(fitPowerLaw([], 0), null)
  assert.equal(fitPowerLaw([1], 0), null)
  assert.equal(fitPowerLaw([3, 3, 3], 0), null) // all points at t_n: Σ ln = 0
  assert.equal(fitPowerLaw([1, 2], Number.NaN), null)
  assert.equal(fitPowerLaw([-1, 0], 0), null) // points at or before the window start are ignored
  const fit = fitPowerLaw([1, 2, 3, 4, 5], 0)!
  assert.equal(localisedRate(fit, 0), null)
  assert.equal(localisedRate(fit, -1), null)
  assert.equal(localisedRate(fit, Number.POSITIVE_INFINITY), null)

  const none: CrawlChange[] = Array.from({ length: 50 }, (_, i) => ({
    atDays: i,
    changed: i === 0 ? null : false,
    lastModifiedDays: null,
  }))
  assert.equal(currentRate(none, 50), null)
  assert.equal(currentRate([{ atDays: 0, changed: true, lastModifiedDays: null }], 1), null)
  assert.equal(currentRate([], 1), null)
  const all: CrawlChange[] = Array.from({ length: 50 }, (_, i) => ({
    atDays: i,
    changed: true,
    lastModifiedDays: null,
  }))
  const rate = currentRate(all, 50)
  assert.ok(rate)
  assert.ok(Number.isFinite(rate.changesPerDay) && rate.changesPerDay > 0)
  assert.ok(Number.isFinite(rate.beta))
  // Tiny β (near-simultaneous points at the end) stays finite.
  const squeezed = fitPowerLaw([1e-9, 1, 1, 1, 1], 0)
  assert.ok(squeezed === null || (Number.isFinite(squeezed.beta) && Number.isFinite(squeezed.eta)))
})

test('smooth rising power law (β = 2, η = 10 days, 300 changes; 10 runs): λ̌ of the window tracks it, currentRate lags', () => {
  // The window stops where the rise becomes significant, so the window itself shows no trend and
  // currentRate reports its mean rate n/T, which lags a rising intensity (measured here: mean ratio
  // 0.73 for currentRate, 0.90 for λ̌ of the window; over 100 runs mean |error| 22 % against 12 %). This is the price of reading a window
  // without trend as homogeneous, which is what protects the estimate after a step (see above).
  const lambdaRatios: number[] = []
  const currentRatios: number[] = []
  for (let run = 0; run < 10; run++) {
    const changes = simulatePowerLaw(createRandom(21 + run), 2, 10, 300)
    const end = changes[changes.length - 1]!
    const truth = trueIntensity(2, 10, end)
    const window = selectWindow(changes, { originDays: 0 })
    assert.ok(window)
    lambdaRatios.push(localisedRate(window.fit, end)! / truth)
    const rate = currentRate(crawlHistory(changes, 0.02, end, true), end)
    assert.ok(rate)
    currentRatios.push(rate.changesPerDay / truth)
  }
  assert.ok(Math.abs(mean(lambdaRatios) - 1) < 0.15, `mean λ̌/λ ${mean(lambdaRatios)}`)
  assert.ok(mean(currentRatios) > 0.65 && mean(currentRatios) < 1, `mean current/λ ${mean(currentRatios)}`)
})

test('λ̄ (Singh 2007, 3.2): equals λ̌ at the last point, keeps β̂ elsewhere; on average near the true intensity', () => {
  const fit = fitPowerLaw([1, 2, 4, 7, 8, 11], 0)!
  assert.ok(Math.abs(lambdaBar(fit, 11)! - localisedRate(fit, 11)!) < 1e-12)
  // (n − 3) β̂ t^{β̂−1} / t_n^{β̂} at t = 5.
  assert.ok(Math.abs(lambdaBar(fit, 5)! - (3 * fit.beta * Math.pow(5, fit.beta - 1)) / Math.pow(11, fit.beta)) < 1e-12)
  assert.equal(lambdaBar(fitPowerLaw([1, 2, 4], 0)!, 4), null)
  assert.equal(lambdaBar(fit, 0), null)
  // Time truncation at T: (n − 1) β̂ t^{β̂−1} / T^{β̂}.
  const timed = fitPowerLaw([1, 2, 4, 7, 8, 11], 0, { observedUntilDays: 15 })!
  assert.ok(Math.abs(lambdaBar(timed, 15)! - (5 * timed.beta) / 15) < 1e-12)
  // β = 2, η = 10, windows of 20 points (Calabria et al. 1988): mean λ̄(t_n) within 10 % of the mean true λ(t_n).
  for (const beta of [0.5, 2]) {
    const estimates: number[] = []
    const truths: number[] = []
    for (let run = 0; run < 400; run++) {
      const times = simulatePowerLaw(createRandom(5000 + run), beta, 10, 20)
      const tn = times[times.length - 1]!
      estimates.push(lambdaBar(fitPowerLaw(times, 0)!, tn)!)
      truths.push(trueIntensity(beta, 10, tn))
    }
    assert.ok(Math.abs(mean(estimates) / mean(truths) - 1) < 0.1, `β=${beta}: ${mean(estimates)} vs ${mean(truths)}`)
  }
})

test('Duane rate (Singh 2007, 3.3): instantaneous (1 − γ) t^{−γ}/α tracks the intensity, cumulative t^{−γ}/α the mean rate', () => {
  for (const beta of [0.5, 1, 2]) {
    const instantaneous: number[] = []
    const cumulative: number[] = []
    for (let run = 0; run < 20; run++) {
      const times = simulatePowerLaw(createRandom(6000 + run), beta, 10, 400)
      const tn = times[times.length - 1]!
      const fit = duaneFit(times, 0)!
      assert.equal(fit.gamma, duaneSlope(times, 0))
      const rates = duaneRate(fit, 0, tn)!
      instantaneous.push(rates.changesPerDay / trueIntensity(beta, 10, tn))
      cumulative.push(rates.cumulativeChangesPerDay / (times.length / tn))
    }
    assert.ok(Math.abs(mean(instantaneous) - 1) < 0.15, `β=${beta}: instantaneous / true ${mean(instantaneous)}`)
    assert.ok(Math.abs(mean(cumulative) - 1) < 0.1, `β=${beta}: cumulative / (n/t_n) ${mean(cumulative)}`)
  }
  assert.equal(duaneRate({ gamma: 0, alpha: 1 }, 5, 5), null)
})

test('segmentHistory: windows over the whole history follow each change of rate (1, 5, then 0.5 a day; 20 runs)', () => {
  const regimes = [
    { untilDays: 100, changesPerDay: 1 },
    { untilDays: 140, changesPerDay: 5 },
    { untilDays: 300, changesPerDay: 0.5 },
  ]
  const boundaryErrors: number[] = []
  for (let run = 0; run < 20; run++) {
    const times = simulatePiecewise(createRandom(7000 + run), regimes)
    const windows = segmentHistory(times, { originDays: 0 })
    // Contiguous, covering every point, the last one the current window.
    assert.equal(windows[0]!.startIndex, 0)
    assert.equal(windows[0]!.windowStartDays, 0)
    for (let i = 1; i < windows.length; i++) {
      assert.equal(windows[i]!.startIndex, windows[i - 1]!.endIndex)
      assert.equal(windows[i]!.windowStartDays, windows[i - 1]!.windowEndDays)
    }
    assert.equal(windows[windows.length - 1]!.endIndex, times.length)
    assert.equal(windows[windows.length - 1]!.startIndex, selectWindow(times, { originDays: 0 })!.startIndex)
    assert.ok(windows.every((w) => w.points >= 4))
    // A window boundary near each change of rate, and each regime's rate from the window covering it.
    for (const change of [100, 140]) {
      boundaryErrors.push(Math.min(...windows.slice(1).map((w) => Math.abs(w.windowStartDays - change))))
    }
    for (const regime of regimes) {
      const middle = regime.untilDays - 10
      const covering = windows.find((w) => w.windowStartDays <= middle && middle <= w.windowEndDays)!
      assert.ok(
        Math.abs(covering.meanChangesPerDay / regime.changesPerDay - 1) < 0.35,
        `run ${run}: ${covering.meanChangesPerDay} for ${regime.changesPerDay}`,
      )
    }
  }
  assert.ok(mean(boundaryErrors) < 3, `mean distance of the nearest boundary to a change: ${mean(boundaryErrors)} days`)
  assert.deepEqual(segmentHistory([1, 2, 3]), [])
})

test('rateHistory and currentRate: every window estimate of a constant rate (1/day, 200 days; 10 runs) is near 1 on average', () => {
  // Measured mean (and lowest run): n/T 0.96 (0.79), λ̌ and λ̄ 0.98 (0.85), Duane 0.93 (0.65), cumulative Duane 0.94 (0.70).
  const sums: Record<string, number> = {}
  for (let run = 0; run < 10; run++) {
    const changes = simulatePiecewise(createRandom(85 + run), [{ untilDays: 200, changesPerDay: 1 }])
    const crawls = crawlHistory(changes, 0.05, 200, true)
    const windows = rateHistory(crawls)
    assert.ok(windows.length >= 1)
    assert.equal(windows[windows.length - 1]!.endIndex, updatePointsFromCrawls(crawls).length)
    const rate = currentRate(crawls, 200)!
    assert.equal(rate.changesPerDay, rate.model === 'constant' ? rate.alternatives.mean : rate.alternatives.weibull)
    for (const [name, value] of Object.entries(rate.alternatives)) {
      assert.ok(value !== null)
      sums[name] = (sums[name] ?? 0) + value / 10
    }
  }
  for (const [name, value] of Object.entries(sums)) assert.ok(Math.abs(value - 1) < 0.2, `${name}: mean ${value}`)
})
