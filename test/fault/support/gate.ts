import { postgresBinDir } from './postgres.ts'

/**
 * The fault tests (SIGKILL, database crash, replicas) start processes and a private Postgres
 * cluster and take up to a minute each, so they run where FAULT_TESTS=1 is set: .ci/run has a
 * step of their own. Elsewhere they are reported as skipped, with this reason, and a warning.
 */
const FAULT_TESTS_ENABLED = process.env.FAULT_TESTS === '1'

export function faultTestsSkip(file: string): string | false {
  if (FAULT_TESTS_ENABLED) return false
  const reason = `fault tests run only with FAULT_TESTS=1 (bash .ci/run runs them in a step of their own): FAULT_TESTS=1 npm test -- ${file}`
  console.warn(`\n!!! SKIPPED ${file}: ${reason}\n`)
  return reason
}

/** initdb/pg_ctl for a private cluster; with FAULT_TESTS=1 their absence is a failure, not a skip. */
export async function requirePostgresBinDir(): Promise<string> {
  const dir = await postgresBinDir()
  if (dir === null) {
    throw new Error(
      'no initdb/pg_ctl found (install postgresql, or set PG_BIN to their directory): the Postgres fault tests cannot run',
    )
  }
  return dir
}
