/**
 * Tables and the goal check of the freshness benchmark, as plain text or Markdown.
 */
import { WELL_OBSERVED_INTERVALS, type RunResult } from './engine.ts'
import {
  DEFAULT_LOOP_POLICY,
  ORACLE_POLICY,
  RENEWAL_ORACLE_POLICY,
  type SimOptions,
  type TaskResult,
} from './runner.ts'

interface GroupTable {
  workload: string
  importance: string
  budgetCrawlsPerDay: number
  timeScale: string | null
  rows: TableRow[]
}

interface TableRow {
  policy: string
  freshness: number
  /** Freshness / oracle-periodic freshness, the Poisson-model oracle (null when it did not run). */
  ratioToOracle: number | null
  /** Freshness / oracle-renewal freshness, the distribution-aware oracle (null when it did not run). */
  ratioToRenewalOracle: number | null
  /** Crawls / (R × horizon). */
  crawlsUsed: number
  /** Crawls of each whole day of the scoring window / R: the lowest and the highest day. */
  dailyBudgetUse: { min: number; max: number } | null
  crawls: number
  medianRelativeError: number | null
  medianEstimateRatio: number | null
  medianEstimateRatioWellObserved: number | null
  /** |Δ̂ − Δ|/Δ over pages with 1 to 8 intervals: count, median and 90th percentile (RunResult). */
  fewCrawlsRelativeError: RunResult['fewCrawlsRelativeError']
  /** The same pages' scheduling estimate, MLE and fleet-truth bound on one set of histories (RunResult). */
  fewCrawlsEstimation: RunResult['fewCrawlsEstimation']
  elapsedMs: number
}

export function groupResults(results: readonly TaskResult[]): GroupTable[] {
  const groups = new Map<string, GroupTable>()
  for (const r of results) {
    const key = `${r.workload}|${r.importance}`
    let g = groups.get(key)
    if (!g) {
      g = {
        workload: r.workload,
        importance: r.importance,
        budgetCrawlsPerDay: r.budgetCrawlsPerDay,
        timeScale: r.timeScale,
        rows: [],
      }
      groups.set(key, g)
    }
    g.rows.push({
      policy: r.policy,
      freshness: r.result.freshness,
      ratioToOracle: null,
      ratioToRenewalOracle: null,
      crawlsUsed: r.result.budgetCrawls > 0 ? r.result.crawls / r.result.budgetCrawls : 0,
      dailyBudgetUse:
        r.result.dailyBudgetUse.length === 0
          ? null
          : { min: Math.min(...r.result.dailyBudgetUse), max: Math.max(...r.result.dailyBudgetUse) },
      crawls: r.result.crawls,
      medianRelativeError: r.result.medianRelativeError,
      medianEstimateRatio: r.result.medianEstimateRatio,
      medianEstimateRatioWellObserved: r.result.medianEstimateRatioWellObserved,
      fewCrawlsRelativeError: r.result.fewCrawlsRelativeError,
      fewCrawlsEstimation: r.result.fewCrawlsEstimation,
      elapsedMs: r.elapsedMs,
    })
  }
  for (const g of groups.values()) {
    const oracle = g.rows.find((row) => row.policy === ORACLE_POLICY)
    const renewalOracle = g.rows.find((row) => row.policy === RENEWAL_ORACLE_POLICY)
    for (const row of g.rows) {
      row.ratioToOracle = oracle && oracle.freshness > 0 ? row.freshness / oracle.freshness : null
      row.ratioToRenewalOracle =
        renewalOracle && renewalOracle.freshness > 0 ? row.freshness / renewalOracle.freshness : null
    }
  }
  return [...groups.values()]
}

interface GoalCheck {
  workload: string
  importance: string
  loopRatio: number | null
  /** The default loop against the distribution-aware oracle. */
  loopRatioRenewal: number | null
  beatsNutch: boolean | null
  beatsProportional: boolean | null
}

/** The goals of the benchmark, per workload and importance, for the default loop. */
export function checkGoals(groups: readonly GroupTable[]): GoalCheck[] {
  return groups.map((g) => {
    const loop = g.rows.find((r) => r.policy === DEFAULT_LOOP_POLICY)
    const nutch = g.rows.find((r) => r.policy === 'nutch')
    const proportional = g.rows.find((r) => r.policy === 'proportional')
    return {
      workload: g.workload,
      importance: g.importance,
      loopRatio: loop?.ratioToOracle ?? null,
      loopRatioRenewal: loop?.ratioToRenewalOracle ?? null,
      beatsNutch: loop && nutch ? loop.freshness > nutch.freshness : null,
      beatsProportional: loop && proportional ? loop.freshness > proportional.freshness : null,
    }
  })
}

const fixed = (v: number | null, digits: number) => (v === null || !Number.isFinite(v) ? '–' : v.toFixed(digits))

function tableCells(row: TableRow): string[] {
  return [
    row.policy === DEFAULT_LOOP_POLICY ? `${row.policy} (default)` : row.policy,
    fixed(row.freshness, 4),
    fixed(row.ratioToOracle, 3),
    fixed(row.ratioToRenewalOracle, 3),
    fixed(row.crawlsUsed, 3),
    row.dailyBudgetUse === null ? '–' : `${fixed(row.dailyBudgetUse.min, 2)}–${fixed(row.dailyBudgetUse.max, 2)}`,
    fixed(row.medianRelativeError, 3),
    fixed(row.medianEstimateRatio, 3),
    fixed(row.medianEstimateRatioWellObserved, 3),
  ]
}

const HEADER = [
  'policy',
  'freshness F',
  `F / ${ORACLE_POLICY}`,
  `F / ${RENEWAL_ORACLE_POLICY}`,
  'crawls / budget',
  'budget use per day',
  'median |Δ̂−Δ|/Δ',
  'median Δ̂/Δ',
  `Δ̂/Δ, ≥ ${WELL_OBSERVED_INTERVALS} intervals`,
]

function groupTitle(g: GroupTable): string {
  const scale = g.timeScale ? `; ${g.timeScale}` : ''
  return `${g.workload}, ${g.importance} importance (R = ${g.budgetCrawlsPerDay.toFixed(1)} crawls/day${scale})`
}

export function renderText(groups: readonly GroupTable[], options: SimOptions): string {
  const lines: string[] = [describeOptions(options), '']
  for (const g of groups) {
    lines.push(groupTitle(g))
    const rows = [HEADER, ...g.rows.map(tableCells)]
    const widths = HEADER.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
    for (const r of rows)
      lines.push('  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
    lines.push('')
  }
  lines.push(renderGoals(groups))
  return lines.join('\n')
}

export function renderMarkdown(groups: readonly GroupTable[], options: SimOptions): string {
  const lines: string[] = []
  for (const g of groups) {
    lines.push(`**${groupTitle(g)}**`, '')
    lines.push(`| ${HEADER.join(' | ')} |`, `|${HEADER.map((_, c) => (c === 0 ? '---' : '---:')).join('|')}|`)
    for (const row of g.rows) lines.push(`| ${tableCells(row).join(' | ')} |`)
    lines.push('')
  }
  lines.push('```', describeOptions(options), renderGoals(groups), '```')
  return lines.join('\n')
}

function describeOptions(o: SimOptions): string {
  return (
    `pages ${o.pageCount}, horizon ${o.horizonDays} days, warm-up ${o.warmupDays} days (freshness scored on the rest), seed ${o.seed}, ` +
    `reoptimize every ${o.reoptimizeDays} day(s); budget R = ${o.crawlsPerPagePerDay} crawl/page/day` +
    (o.replayCrawlsPerChange === null
      ? '; '
      : ` (synthetic), ${o.replayCrawlsPerChange} crawls per change (replay); `) +
    `${Math.round(o.lastModifiedShare * 100)} % of hosts send Last-Modified; ` +
    (o.baselineAtStart ? 'first recrawls at a random point of the first interval; ' : 'first crawl a baseline; ') +
    (o.engineMode === 'fleet'
      ? 'every policy on a fleet of R crawls/day, most overdue first'
      : 'policies crawl at their own due times (Nutch on the fleet)')
  )
}

function renderGoals(groups: readonly GroupTable[]): string {
  const lines = [`goals (${DEFAULT_LOOP_POLICY}, ratio to ${ORACLE_POLICY} / ${RENEWAL_ORACLE_POLICY}):`]
  for (const c of checkGoals(groups)) {
    const mark = (b: boolean | null) => (b === null ? 'n/a' : b ? 'yes' : 'NO')
    const ratioGoal =
      c.workload === 'poisson' && c.loopRatio !== null ? (c.loopRatio >= 0.98 ? ' (≥ 0.98: yes)' : ' (≥ 0.98: NO)') : ''
    lines.push(
      `  ${`${c.workload}/${c.importance}`.padEnd(20)} ratio ${fixed(c.loopRatio, 3)}${ratioGoal} / ${fixed(c.loopRatioRenewal, 3)}; beats nutch: ${mark(c.beatsNutch)}; beats proportional: ${mark(c.beatsProportional)}`,
    )
  }
  return lines.join('\n')
}
