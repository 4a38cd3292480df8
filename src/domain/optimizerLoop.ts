import type { Logger } from 'pino'
import { readSettingsDocument } from '../store/settingsRepo.ts'
import { runOptimizer, type OptimizeDeps, type OptimizeResult } from './optimize.ts'
import { settingsFromStored } from './settings.ts'

/**
 * Runs the optimiser every `settings.reoptimizeSeconds` (read again before each wait, so a change
 * applies from the next run). Every replica runs the loop; the advisory lock makes one of them
 * solve and the others skip. Failures are logged and retried at the next tick.
 */
export function startOptimizerLoop(
  deps: OptimizeDeps & { logger: Logger },
  hooks: { onOptimized?: (r: OptimizeResult) => void; firstDelayMs?: number } = {},
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | null = null
  let stopped = false
  let running: Promise<void> | null = null

  const schedule = (delayMs: number) => {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = null
      })
    }, delayMs)
    timer.unref()
  }

  const tick = async () => {
    let nextSeconds = 300
    try {
      nextSeconds = settingsFromStored(await readSettingsDocument(deps.pool)).reoptimizeSeconds
      const result = await runOptimizer(deps, { trigger: 'periodic', wait: false })
      if (result) hooks.onOptimized?.(result)
      else deps.logger.debug('optimiser run skipped: another replica holds the lock')
    } catch (err) {
      deps.logger.error({ err }, 'periodic optimiser run failed')
    }
    schedule(nextSeconds * 1000)
  }

  schedule(hooks.firstDelayMs ?? 5_000)
  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
