/**
 * Runs simulation tasks on a few child processes (one per core by default). Tasks are handed out in
 * order, one at a time per child, so a child usually reuses the universe of its previous task.
 * Results do not depend on the number of children: every task is seeded on its own.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { runTask, type SimOptions, type SimTask, type TaskResult } from './runner.ts'

export interface ParallelProgress {
  done: number
  total: number
  /** Σ over tasks of their completed fraction. */
  work: number
}

export async function runTasks(
  tasks: readonly SimTask[],
  options: SimOptions,
  jobs: number,
  onProgress: (p: ParallelProgress) => void,
): Promise<TaskResult[]> {
  const results: TaskResult[] = new Array(tasks.length)
  const fractions = new Float64Array(tasks.length)
  let done = 0
  const report = () => onProgress({ done, total: tasks.length, work: fractions.reduce((a, b) => a + b, 0) })

  if (jobs <= 1) {
    for (let i = 0; i < tasks.length; i++) {
      results[i] = await runTask(tasks[i]!, options, (f) => {
        fractions[i] = f
        report()
      })
      fractions[i] = 1
      done++
      report()
    }
    return results
  }

  // From the sources (tsx) the worker is TypeScript and needs the tsx loader; from dist/ it is plain JS.
  const fromSources = import.meta.url.endsWith('.ts')
  const workerUrl = new URL(fromSources ? './simWorker.ts' : './simWorker.js', import.meta.url)
  const execArgv = fromSources ? ['--import', import.meta.resolve('tsx')] : []
  let next = 0
  const children: ChildProcess[] = []
  try {
    await new Promise<void>((resolvePool, rejectPool) => {
      const startChild = () => {
        const child = fork(workerUrl, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
        children.push(child)
        const give = () => {
          if (next >= tasks.length) {
            child.disconnect()
            return
          }
          const id = next++
          child.send({ type: 'run', id, task: tasks[id], options })
        }
        child.on(
          'message',
          (m: { type: string; id: number; fraction?: number; result?: TaskResult; message?: string }) => {
            if (m.type === 'progress') {
              fractions[m.id] = m.fraction ?? 0
              report()
            } else if (m.type === 'done') {
              results[m.id] = m.result!
              fractions[m.id] = 1
              done++
              report()
              if (done === tasks.length) resolvePool()
              else give()
            } else if (m.type === 'failed') {
              rejectPool(new Error(`task ${JSON.stringify(tasks[m.id])} failed: ${m.message}`))
            }
          },
        )
        child.on('exit', (code) => {
          if (code !== 0 && code !== null && done < tasks.length)
            rejectPool(new Error(`simulation worker exited with code ${code}`))
        })
        give()
      }
      for (let j = 0; j < Math.min(jobs, tasks.length); j++) startChild()
      if (tasks.length === 0) resolvePool()
    })
  } finally {
    for (const child of children) if (child.connected) child.disconnect()
  }
  return results
}
