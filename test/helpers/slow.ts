/**
 * Simulation-heavy tests (seconds of CPU each: thousands of simulated runs or hundreds of thousands of
 * pages). `npm test` and CI run them; `npm run test:unit` sets SKIP_SLOW_TESTS=1 and reports them as
 * skipped, so the inner loop stays under a minute. Tag one with `test(name, SLOW, fn)`.
 */
const SKIP = process.env.SKIP_SLOW_TESTS === '1'

export const SLOW: { skip: string | false } = {
  skip: SKIP ? 'simulation-heavy: runs in npm test and CI, skipped by npm run test:unit' : false,
}
