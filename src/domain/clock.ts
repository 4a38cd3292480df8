/** The one time source of the domain: injected so tests and the simulator can move time. */
export interface Clock {
  nowMs(): number
  /**
   * Present only on a simulated clock: moves time forward to `ms` (never backwards). Ingest calls it
   * with the latest reported crawl time, so a simulated crawler fleet drives the service's time.
   */
  advanceTo?(ms: number): void
}

export const systemClock: Clock = { nowMs: () => Date.now() }

/** A clock tests move by hand. */
export function manualClock(startMs: number): Clock & { advanceMs(ms: number): void; setMs(ms: number): void } {
  let now = startMs
  return {
    nowMs: () => now,
    advanceMs(ms: number) {
      now += ms
    },
    setMs(ms: number) {
      now = ms
    },
  }
}

/**
 * Simulation time (SIMULATED_CLOCK=true, never the default): starts at `startMs` and moves only
 * forward, to the latest crawl time reported or a time set through `PUT /v1/clock`.
 */
export function simulatedClock(startMs: number): Clock & { advanceTo(ms: number): void } {
  let now = startMs
  return {
    nowMs: () => now,
    advanceTo(ms: number) {
      if (Number.isFinite(ms) && ms > now) now = ms
    },
  }
}
