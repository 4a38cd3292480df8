/**
 * A proportion learned from counts (docs/math.md 5.2): a beta posterior whose prior borrows a bounded number of
 * pseudo-observations from a wider group's figures (empirical Bayes with a capped prior strength).
 */

/** Successes out of trials. */
export interface Tally {
  hits: number
  trials: number
}

export interface BetaPosterior {
  alpha: number
  beta: number
  /** Posterior mean α / (α + β). */
  mean: number
  /** Posterior standard deviation. */
  sd: number
  /** A lower credible bound: the mean less 1.645 standard deviations (the normal approximation of the 5 % quantile), at least 0. */
  lower: number
  /** Observations behind it: the group's own trials plus the pseudo-observations borrowed from the wider group. */
  evidence: number
}

/** How many pseudo-observations the wider group may lend at most. */
export const MAX_BORROWED_TRIALS = 10

const Z_95_ONE_SIDED = 1.645

/**
 * The posterior of a group's proportion after `own` (e.g. one source on one host), with a prior centred on the
 * wider group's proportion (`wider`, e.g. the source on every other host; Laplace-smoothed) carrying
 * min(wider.trials, MAX_BORROWED_TRIALS) pseudo-observations on top of a uniform Beta(1, 1).
 */
export function borrowedBetaPosterior(own: Tally, wider: Tally): BetaPosterior {
  const widerMean = (wider.hits + 1) / (wider.trials + 2)
  const borrowed = Math.min(Math.max(wider.trials, 0), MAX_BORROWED_TRIALS)
  const alpha = 1 + borrowed * widerMean + own.hits
  const beta = 1 + borrowed * (1 - widerMean) + (own.trials - own.hits)
  return betaSummary(alpha, beta, own.trials + borrowed)
}

function betaSummary(alpha: number, beta: number, evidence: number): BetaPosterior {
  const n = alpha + beta
  const mean = alpha / n
  const sd = Math.sqrt((alpha * beta) / (n * n * (n + 1)))
  return { alpha, beta, mean, sd, lower: Math.max(0, mean - Z_95_ONE_SIDED * sd), evidence }
}
