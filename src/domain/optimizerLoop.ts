import type { Logger } from 'pino'
import { loadSettings } from '../store/settingsRepo.ts'
import type { DomainDeps } from './deps.ts'
import { runOptimizer, type OptimizeResult } from './optimize.ts'
import { MS_PER_SECOND } from '../math/units.ts'

/** After a failed run (e.g. the database was unreachable), the next try comes this soon at the latest. */
const RETRY_AFTER_FAILURE_SECONDS = 30
/** The first run comes this soon after start unless the caller says otherwise. */
const FIRST_RUN_DELAY_MS = 5_000

/**
 * Runs the optimiser every `settings.reoptimizeSeconds` (read again before each wait, so a change
 * applies from the next run). Every replica runs the loop; the advisory lock makes one of them
 * solve and the others skip. A failed run (database unreachable, a timeout) is logged and tried again
 * after at most RETRY_AFTER_FAILURE_SECONDS; it never stops the loop.
 */
export function startOptimizerLoop(
  deps: DomainDeps & { logger: Logger },
  hooks: { onOptimized?: (r: OptimizeResult) => void; firstDelayMs?: number } = {},
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | null = null
  let stopped = false
  let running: Promise<void> | null = null

  const tickAfter = (delayMs: number) => {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = null
      })
    }, delayMs)
    timer.unref()
  }

  /** The interval of the last settings read; kept when the database cannot be read. */
  let intervalSeconds = 300
  const tick = async () => {
    let nextSeconds: number
    try {
      intervalSeconds = (await loadSettings(deps.pool)).reoptimizeSeconds
      nextSeconds = intervalSeconds
      const result = await runOptimizer(deps, { trigger: 'periodic', wait: false })
      if (result) hooks.onOptimized?.(result)
      else deps.logger.debug('optimiser run skipped: another replica holds the lock')
    } catch (err) {
      nextSeconds = Math.min(intervalSeconds, RETRY_AFTER_FAILURE_SECONDS)
      deps.logger.error({ err, retryInSeconds: nextSeconds }, 'periodic optimiser run failed')
    }
    tickAfter(nextSeconds * MS_PER_SECOND)
  }

  tickAfter(hooks.firstDelayMs ?? FIRST_RUN_DELAY_MS)
  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
