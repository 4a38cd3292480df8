/**
 * The stored form of an EstimatorState: a flat run of float64 values, big-endian (the byte order of
 * Postgres's float8send, so migrations/0006 can write it in SQL). A page row is rewritten by every
 * ingest batch that touches it, and as jsonb the state cost Postgres more than the rest of the row
 * together (every number converted to numeric); as bytes it is about half the size and is copied as is.
 *
 * Layout (every slot one float64; NaN stands for null):
 *   version, intervals, changes, observedDays, saChangesPerDay, unchangedDays,
 *   lastModified.crawls, lastModified.changes, lastModified.exposureDays,
 *   k, k class log-probabilities,
 *   segment: intervals (NaN: no segment stored, the whole history is the segment), changes,
 *            observedDays, unchangedDays, cusumUp, cusumDown, changesPerDay, restarts,
 *   then three histograms (changed, unchanged, segment's changed), each as its bin count b and
 *   b × (bucket, count, sumDays, sumSquaresDays);
 *   version 2 appends: ageShape (NaN: Poisson), ageShapeRateRatio, ageShapeFitIntervals, a fourth
 *   histogram (ages at crawls), and the segment's dispersion statistics: blockIntervals, blockChanges,
 *   blockExpected, blockVariance, blocks, squaredResiduals, variances, dispersionUp, dispersionDown;
 *   version 3 appends the blind shape fit's evidence: quietDays, windowDays (NaN: no change yet), and its
 *   histogram as a bin count b and b × (key, unchanged, changed, Σ quiet, Σ window, Σ interval).
 * Version 1 bytes, stored before shape fits, still decode: their shape fields are empty (Poisson, never
 * fitted) and the page is fitted when next due. Version 2 bytes decode with an empty blind histogram: its
 * evidence starts with the next interval. Decoding goes through readEstimatorState, so bytes that
 * are short or malformed give empty fields, never NaN further on.
 */
import type { HistogramBin } from './histogram.ts'
import { readEstimatorState, type EstimatorState } from './state.ts'

const STATE_LAYOUT_VERSION = 3
/** Layouts that decode: 1 (without the shape fit's fields), 2 (without the blind fit's) and the current one. */
const READABLE_VERSIONS: ReadonlySet<number> = new Set([1, 2, 3])

function nullable(x: number | null): number {
  return x === null ? Number.NaN : x
}

function pushHistogram(out: number[], bins: readonly HistogramBin[]): void {
  out.push(bins.length)
  for (const bin of bins) out.push(bin[0], bin[1], bin[2], bin[3])
}

export function encodeEstimatorState(state: EstimatorState): Uint8Array {
  const s = readEstimatorState(state)
  const g = s.segment
  const values: number[] = [
    STATE_LAYOUT_VERSION,
    s.intervals,
    s.changes,
    s.observedDays,
    nullable(s.saChangesPerDay),
    s.unchangedDays,
    s.lastModified.crawls,
    s.lastModified.changes,
    s.lastModified.exposureDays,
    s.classLogProbabilities.length,
    ...s.classLogProbabilities,
    g.intervals,
    g.changes,
    g.observedDays,
    g.unchangedDays,
    g.cusumUp,
    g.cusumDown,
    nullable(g.changesPerDay),
    g.restarts,
  ]
  pushHistogram(values, s.changedHistogram)
  pushHistogram(values, s.unchangedHistogram)
  pushHistogram(values, g.changedHistogram)
  values.push(nullable(s.ageShape), s.ageShapeRateRatio, s.ageShapeFitIntervals)
  pushHistogram(values, s.ageHistogram)
  values.push(
    g.blockIntervals,
    g.blockChanges,
    g.blockExpected,
    g.blockVariance,
    g.blocks,
    g.squaredResiduals,
    g.variances,
    g.dispersionUp,
    g.dispersionDown,
  )
  values.push(s.quietDays, nullable(s.windowDays), s.blindHistogram.length)
  for (const bin of s.blindHistogram) values.push(...bin)
  const bytes = new Uint8Array(values.length * 8)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < values.length; i++) view.setFloat64(i * 8, values[i]!, false)
  return bytes
}

/** Reads the float64 slots of stored bytes in order; past the end every slot is NaN. */
class SlotReader {
  private at = 0
  private readonly view: DataView
  private readonly count: number
  constructor(bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.count = Math.floor(bytes.byteLength / 8)
  }
  get done(): boolean {
    return this.at >= this.count
  }
  next(): number {
    return this.at < this.count ? this.view.getFloat64(8 * this.at++, false) : Number.NaN
  }
  nullable(): number | null {
    const x = this.next()
    return Number.isNaN(x) ? null : x
  }
  list(length: number, width: number): number[][] {
    const rows: number[][] = []
    for (let i = 0; i < length && !this.done; i++) {
      const row: number[] = []
      for (let k = 0; k < width; k++) row.push(this.next())
      rows.push(row)
    }
    return rows
  }
}

/** The state stored as `bytes`; null when there are none (a page never crawled twice). */
export function decodeEstimatorState(bytes: Uint8Array | null): EstimatorState | null {
  if (bytes === null || bytes.length < 8) return null
  const r = new SlotReader(bytes)
  const version = r.next()
  if (!READABLE_VERSIONS.has(version)) return null
  const intervals = r.next()
  const changes = r.next()
  const observedDays = r.next()
  const saChangesPerDay = r.nullable()
  const unchangedDays = r.next()
  const lastModified = { crawls: r.next(), changes: r.next(), exposureDays: r.next() }
  const classLogProbabilities = r.list(r.next(), 1).map((row) => row[0]!)
  const segmentIntervals = r.next()
  const segment = {
    intervals: segmentIntervals,
    changes: r.next(),
    observedDays: r.next(),
    unchangedDays: r.next(),
    cusumUp: r.next(),
    cusumDown: r.next(),
    changesPerDay: r.nullable(),
    restarts: r.next(),
  }
  const changedHistogram = r.list(r.next(), 4)
  const unchangedHistogram = r.list(r.next(), 4)
  const segmentHistogram = r.list(r.next(), 4)
  const shapeFields =
    version >= 2
      ? {
          ageShape: r.nullable(),
          ageShapeRateRatio: r.next(),
          ageShapeFitIntervals: r.next(),
          ageHistogram: r.list(r.next(), 4),
        }
      : {}
  const runs =
    version >= 2
      ? {
          blockIntervals: r.next(),
          blockChanges: r.next(),
          blockExpected: r.next(),
          blockVariance: r.next(),
          blocks: r.next(),
          squaredResiduals: r.next(),
          variances: r.next(),
          dispersionUp: r.next(),
          dispersionDown: r.next(),
        }
      : {}
  const blindFields =
    version >= 3 ? { quietDays: r.next(), windowDays: r.nullable(), blindHistogram: r.list(r.next(), 6) } : {}
  return readEstimatorState({
    v: 1,
    intervals,
    changes,
    observedDays,
    saChangesPerDay,
    unchangedDays,
    changedHistogram,
    unchangedHistogram,
    lastModified,
    classLogProbabilities,
    ...(Number.isNaN(segmentIntervals) ? {} : { segment: { ...segment, ...runs, changedHistogram: segmentHistogram } }),
    ...shapeFields,
    ...blindFields,
  })
}
