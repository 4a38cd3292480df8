/**
 * Replay of real update histories (datasets/replay in this repository): gzipped JSON lines, a header line
 * `{source, windowStart, windowEnd, unit}` then one `{page, changes: [unix seconds]}` per page.
 * The whole data window is mapped onto the simulated horizon, so one simulated day stands for
 * (window length / horizon) real days; the report states that scale.
 */
import { readFile } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Random } from '../math/random.ts'
import { drawImportance, lastModifiedFlags, realisedAgeLaw, type ImportanceKind, type Universe } from './universe.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'

interface ReplayPage {
  page: string
  /** Unix seconds, ascending. */
  changesSeconds: number[]
}

export interface ReplayData {
  source: string
  windowStartSeconds: number
  windowEndSeconds: number
  pages: ReplayPage[]
}

export const REPLAY_FILES = {
  'replay-git': 'git-master-2020-2024.jsonl.gz',
  'replay-tldr': 'tldr-pages-2020-2025.jsonl.gz',
  'replay-peps': 'peps-rfcs-2023-2026.jsonl.gz',
} as const
export type ReplayWorkload = keyof typeof REPLAY_FILES

export const DEFAULT_REPLAY_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../datasets/replay')

/** Parses the text of one replay file. Throws with the line number on malformed input. */
export function parseReplay(text: string): ReplayData {
  const lines = text.split('\n')
  const header = JSON.parse(lines[0] ?? '') as Record<string, unknown>
  const windowStartSeconds = Number(header.windowStart)
  const windowEndSeconds = Number(header.windowEnd)
  if (
    !(Number.isFinite(windowStartSeconds) && windowEndSeconds > windowStartSeconds) ||
    header.unit !== 'unix seconds'
  ) {
    throw new Error('replay header must have windowStart < windowEnd in unix seconds')
  }
  const pages: ReplayPage[] = []
  for (let k = 1; k < lines.length; k++) {
    const line = lines[k]!.trim()
    if (line === '') continue
    const row = JSON.parse(line) as { page?: unknown; changes?: unknown }
    if (
      typeof row.page !== 'string' ||
      !Array.isArray(row.changes) ||
      !row.changes.every((c) => typeof c === 'number' && Number.isFinite(c))
    ) {
      throw new Error(`replay line ${k + 1}: expected {page: string, changes: number[]}`)
    }
    const changesSeconds = (row.changes as number[]).slice().sort((a, b) => a - b)
    pages.push({ page: row.page, changesSeconds })
  }
  return { source: String(header.source ?? ''), windowStartSeconds, windowEndSeconds, pages }
}

export async function readReplayFile(path: string): Promise<ReplayData> {
  return parseReplay(gunzipSync(await readFile(path)).toString('utf8'))
}

interface ReplayUniverseOptions {
  workload: string
  data: ReplayData
  importanceKind: ImportanceKind
  /** Pages sampled without replacement (all when the file has fewer). */
  pageCount: number
  horizonDays: number
  warmupDays: number
  /** The budget: R = crawlsPerPagePerDay × pages, or, when crawlsPerChange is set, R = crawlsPerChange × Σ Δ_i. */
  crawlsPerPagePerDay?: number
  crawlsPerChange: number | null
  random: Random
  importanceRandom: Random
  /** Share of hosts (replayHost) that send a usable Last-Modified (default: every host). */
  lastModifiedShare?: number
  lastModifiedRandom?: Random
}

/**
 * The group a replayed file stands for, as a host would: the repository named before a colon
 * (`owner/repo:path`), else the file's directory (files of one directory are pages of one site section).
 */
export function replayHost(page: string): string {
  const colon = page.indexOf(':')
  if (colon > 0) return page.slice(0, colon)
  const slash = page.lastIndexOf('/')
  return slash > 0 ? page.slice(0, slash) : '.'
}

/**
 * A universe from replayed histories: the data window [windowStart, windowEnd] becomes
 * [0, horizonDays]; the oracle's Δ is the page's change count over the horizon.
 */
export function replayUniverse(options: ReplayUniverseOptions): Universe {
  const { data, horizonDays, random } = options
  const all = data.pages
  const order = Int32Array.from({ length: all.length }, (_, i) => i)
  const n = Math.min(options.pageCount, all.length)
  for (let i = 0; i < n; i++) {
    const j = i + random.int(all.length - i)
    const t = order[i]!
    order[i] = order[j]!
    order[j] = t
  }
  const chosen = Array.from(order.subarray(0, n)).sort((a, b) => a - b)
  const windowSeconds = data.windowEndSeconds - data.windowStartSeconds
  const secondsPerSimDay = windowSeconds / horizonDays
  const offsets = new Int32Array(n + 1)
  const times: number[] = []
  const trueRates = new Float64Array(n)
  for (let k = 0; k < n; k++) {
    offsets[k] = times.length
    let count = 0
    for (const s of all[chosen[k]!]!.changesSeconds) {
      const t = (s - data.windowStartSeconds) / secondsPerSimDay
      if (t > 0 && t <= horizonDays) {
        times.push(t)
        count++
      }
    }
    trueRates[k] = count / horizonDays
  }
  offsets[n] = times.length
  let totalRate = 0
  for (const r of trueRates) totalRate += r
  const realDaysPerSimDay = secondsPerSimDay / SECONDS_PER_DAY
  const changeDays = Float64Array.from(times)
  const hostNames: string[] = []
  const hostIndex = new Map<string, number>()
  const hostOfPage = Int32Array.from({ length: n }, (_, k) => {
    const host = replayHost(all[chosen[k]!]!.page)
    let h = hostIndex.get(host)
    if (h === undefined) {
      h = hostNames.length
      hostIndex.set(host, h)
      hostNames.push(host)
    }
    return h
  })
  return {
    workload: options.workload,
    importanceKind: options.importanceKind,
    pageCount: n,
    horizonDays,
    warmupDays: options.warmupDays,
    changeDays,
    changeOffsets: offsets,
    trueChangesPerDay: trueRates,
    ageLaws: Array.from({ length: n }, (_, i) =>
      realisedAgeLaw(changeDays, offsets, i, options.warmupDays, horizonDays),
    ),
    importance: drawImportance(options.importanceKind, n, options.importanceRandom),
    budgetCrawlsPerDay:
      options.crawlsPerChange === null ? (options.crawlsPerPagePerDay ?? 1) * n : options.crawlsPerChange * totalRate,
    timeScale: `1 simulated day = ${realDaysPerSimDay.toFixed(2)} real days (${n} of ${all.length} files, ${times.length} changes)`,
    hostOfPage,
    hostNames,
    sendsLastModified: lastModifiedFlags(hostOfPage, hostNames.length, options),
  }
}
