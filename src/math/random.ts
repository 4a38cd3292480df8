/**
 * Seeded pseudo-random numbers for simulations and tests (no global state, no clock).
 *
 * Generator: SplitMix32-seeded xoshiro128** (Blackman & Vigna). Period 2^128 − 1, 32-bit outputs,
 * two outputs per double. Not cryptographic.
 */
export interface Random {
  /** Uniform on [0, 1). */
  next(): number
  /** Exponential draw with the given rate (mean 1/rate). rate must be > 0. */
  exponential(rate: number): number
  /** Integer uniform on [0, n). */
  int(n: number): number
}

function splitMix32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x9e3779b9) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
}

/** A generator whose whole sequence is fixed by `seed` (any integer). */
export function createRandom(seed: number): Random {
  const init = splitMix32(seed)
  let a = init()
  let b = init()
  let c = init()
  let d = init()
  if ((a | b | c | d) === 0) a = 1

  function nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0
    const t = (b << 9) >>> 0
    c ^= a
    d ^= b
    b ^= c
    a ^= d
    c ^= t
    d = rotl(d, 11)
    return result
  }

  function next(): number {
    // 53 random bits: 27 from one output, 26 from the next.
    const hi = nextUint32() >>> 5
    const lo = nextUint32() >>> 6
    return (hi * 67108864 + lo) / 9007199254740992
  }

  return {
    next,
    exponential(rate: number): number {
      return -Math.log1p(-next()) / rate
    },
    int(n: number): number {
      return Math.floor(next() * n)
    },
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
