/** The one time source of the domain: injected so tests and the simulator can move time. */
export interface Clock {
  nowMs(): number
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
