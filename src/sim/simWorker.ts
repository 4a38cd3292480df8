/**
 * Child process that runs simulation tasks for the parallel runner (src/sim/parallel.ts).
 * Messages in: { type: 'run', id, task, options }. Out: { type: 'progress', id, fraction } and
 * { type: 'done', id, result } or { type: 'failed', id, message }.
 */
import { buildUniverse, runTask, type SimOptions, type SimTask } from './runner.ts'
import type { Universe } from './universe.ts'

interface RunMessage {
  type: 'run'
  id: number
  task: SimTask
  options: SimOptions
}

/** The last universe built: tasks arrive grouped by universe, so one entry is enough. */
let cached: { key: string; universe: Universe } | null = null

async function handle(message: RunMessage): Promise<void> {
  const { id, task, options } = message
  try {
    const key = JSON.stringify([task.workload, task.importance, options])
    if (cached?.key !== key) cached = { key, universe: await buildUniverse(task.workload, task.importance, options) }
    let lastSent = 0
    const result = await runTask(
      task,
      options,
      (fraction) => {
        const now = Date.now()
        if (now - lastSent < 250 && fraction < 1) return
        lastSent = now
        process.send?.({ type: 'progress', id, fraction })
      },
      cached.universe,
    )
    process.send?.({ type: 'done', id, result })
  } catch (err) {
    process.send?.({ type: 'failed', id, message: err instanceof Error ? err.message : String(err) })
  }
}

let queue = Promise.resolve()
process.on('message', (message: RunMessage) => {
  if (message?.type === 'run') queue = queue.then(() => handle(message))
})
process.on('disconnect', () => process.exit(0))
