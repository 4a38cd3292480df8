/**
 * The event queue of the simulation: one entry per page, keyed by the page's next due time (days).
 * An indexed binary min-heap, so a policy can move any page's due time (re-timing after a solve)
 * in O(log n). Ties are broken by page index, which keeps runs reproducible.
 */
export class DueQueue {
  /** Due time per page, days; +Infinity = never. */
  readonly dueDays: Float64Array
  private readonly heap: Int32Array
  private readonly position: Int32Array

  constructor(pageCount: number) {
    this.dueDays = new Float64Array(pageCount).fill(Number.POSITIVE_INFINITY)
    this.heap = new Int32Array(pageCount)
    this.position = new Int32Array(pageCount)
    for (let i = 0; i < pageCount; i++) {
      this.heap[i] = i
      this.position[i] = i
    }
  }

  get size(): number {
    return this.heap.length
  }

  /** The page due first (any page when none is due). */
  peek(): number {
    return this.heap[0]!
  }

  peekDueDays(): number {
    return this.heap.length === 0 ? Number.POSITIVE_INFINITY : this.dueDays[this.heap[0]!]!
  }

  /** Sets a page's due time (NaN counts as never). */
  set(page: number, dueDays: number): void {
    const due = Number.isNaN(dueDays) ? Number.POSITIVE_INFINITY : dueDays
    const old = this.dueDays[page]!
    this.dueDays[page] = due
    const at = this.position[page]!
    if (due < old) this.up(at)
    else if (due > old) this.down(at)
  }

  private less(a: number, b: number): boolean {
    const da = this.dueDays[a]!
    const db = this.dueDays[b]!
    return da < db || (da === db && a < b)
  }

  private up(at: number): void {
    const heap = this.heap
    const page = heap[at]!
    while (at > 0) {
      const parentAt = (at - 1) >> 1
      const parent = heap[parentAt]!
      if (!this.less(page, parent)) break
      heap[at] = parent
      this.position[parent] = at
      at = parentAt
    }
    heap[at] = page
    this.position[page] = at
  }

  private down(at: number): void {
    const heap = this.heap
    const n = heap.length
    const page = heap[at]!
    for (;;) {
      const left = 2 * at + 1
      if (left >= n) break
      const right = left + 1
      let child = left
      if (right < n && this.less(heap[right]!, heap[left]!)) child = right
      if (!this.less(heap[child]!, page)) break
      heap[at] = heap[child]!
      this.position[heap[at]!] = at
      at = child
    }
    heap[at] = page
    this.position[page] = at
  }
}
