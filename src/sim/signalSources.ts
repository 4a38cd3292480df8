/**
 * Change signals of a simulated web (docs/math.md 5.6): each host has a signal profile, drawn from a mix, and its
 * source (named SIM_SIGNAL_SOURCE, as a sitemap) emits signals from the universe's true change times as that
 * profile dictates. Every signal knows whether it reports a real change, so the trust recrawl learns can be
 * compared with the truth.
 */
import type { Random } from '../math/random.ts'
import { MINUTES_PER_DAY } from '../math/units.ts'
import type { Universe } from './universe.ts'

/**
 * How a host's source behaves:
 * - `none`: no signals (no sitemap, or one without lastmod);
 * - `accurate`: every change, with its true time, as it happens;
 * - `late`: every change, with its true time, received SIGNAL_LATE_DAYS later;
 * - `partial`: a share SIGNAL_PARTIAL_RECALL of the changes, with their true times;
 * - `falsePositives`: every change, plus as many signals again of changes that did not happen;
 * - `buildTime`: lastmod is the sitemap's build time: every page of the host at every build
 *   (SIGNAL_BUILD_PERIOD_DAYS), whether it changed or not.
 */
export const SIGNAL_PROFILES = ['none', 'accurate', 'late', 'partial', 'falsePositives', 'buildTime'] as const
export type SignalProfile = (typeof SIGNAL_PROFILES)[number]

/** A profile for every host, or `mix`: the realistic mix of SIGNAL_MIX. */
export const SIGNAL_SETUPS = [...SIGNAL_PROFILES, 'mix'] as const
export type SignalSetup = (typeof SIGNAL_SETUPS)[number]

/** The source name every simulated signal carries. */
export const SIM_SIGNAL_SOURCE = 'sitemap'

/** Delay of a late source's signals: six hours. */
const SIGNAL_LATE_DAYS = 6 / 24
/** Share of the changes a partial source signals. */
export const SIGNAL_PARTIAL_RECALL = 0.5
/** False signals per true one of a falsePositives source. */
const SIGNAL_FALSE_PER_TRUE = 1
/** A build-time sitemap is rebuilt once a day. */
const SIGNAL_BUILD_PERIOD_DAYS = 1
/** An accurate source's signal arrives a minute after the change (the ping's transit). */
const SIGNAL_TRANSIT_DAYS = 1 / MINUTES_PER_DAY

/**
 * The realistic mix (Bing 2023): 58 % of hosts have a sitemap and 84 % of those carry lastmod; of those, 79 % are
 * correct, 18 % carry the build time and 3 % are partly right. Hosts without a sitemap or without lastmod send
 * nothing.
 */
const SITEMAP_SHARE = 0.58
const LASTMOD_SHARE = 0.84
export const SIGNAL_MIX: Readonly<Record<SignalProfile, number>> = {
  none: 1 - SITEMAP_SHARE * LASTMOD_SHARE,
  accurate: SITEMAP_SHARE * LASTMOD_SHARE * 0.79,
  late: 0,
  partial: SITEMAP_SHARE * LASTMOD_SHARE * 0.03,
  falsePositives: 0,
  buildTime: SITEMAP_SHARE * LASTMOD_SHARE * 0.18,
}

/** Each host's profile: the setup's one profile, or a draw from SIGNAL_MIX per host. */
export function hostSignalProfiles(setup: SignalSetup, hostCount: number, random: Random): SignalProfile[] {
  if (setup !== 'mix') return Array.from({ length: hostCount }, () => setup)
  return Array.from({ length: hostCount }, () => {
    let u = random.next()
    for (const profile of SIGNAL_PROFILES) {
      u -= SIGNAL_MIX[profile]
      if (u < 0) return profile
    }
    return 'none'
  })
}

/** Every signal of a run, in order of receipt. */
export interface SignalEvents {
  page: Int32Array
  /** When the signal reaches the service (days). */
  receivedDays: Float64Array
  /** The change time it claims (days); NaN: none (a build-time sitemap's lastmod claims no change). */
  changedDays: Float64Array
  /** 1 when it reports a real change of its page. */
  truthful: Uint8Array
}

/** What each host's source truly does: signals sent, true ones among them, changes, and changes signalled. */
export interface SignalTruth {
  profile: SignalProfile
  signals: number
  truthfulSignals: number
  changes: number
  changesSignalled: number
}

/** The host of a page (0 when the universe has none). */
const hostOf = (universe: Universe, page: number): number => universe.hostOfPage?.[page] ?? 0

/** Draws every signal of the horizon from the true change times and the hosts' profiles. */
export function signalEvents(
  universe: Universe,
  profiles: readonly SignalProfile[],
  random: Random,
): { events: SignalEvents; truth: SignalTruth[] } {
  const { pageCount: n, changeDays, changeOffsets, horizonDays } = universe
  const truth: SignalTruth[] = profiles.map((profile) => ({
    profile,
    signals: 0,
    truthfulSignals: 0,
    changes: 0,
    changesSignalled: 0,
  }))
  const rows: { page: number; received: number; changed: number; truthful: boolean }[] = []
  const add = (page: number, received: number, changed: number, truthful: boolean) => {
    if (!(received <= horizonDays)) return
    rows.push({ page, received, changed, truthful })
    const t = truth[hostOf(universe, page)]!
    t.signals++
    if (truthful) t.truthfulSignals++
  }
  for (let i = 0; i < n; i++) {
    const t = truth[hostOf(universe, i)]!
    const profile = t.profile
    const from = changeOffsets[i]!
    const to = changeOffsets[i + 1]!
    for (let k = from; k < to; k++) {
      const at = changeDays[k]!
      t.changes++
      const sent =
        profile === 'accurate' ||
        profile === 'late' ||
        profile === 'falsePositives' ||
        (profile === 'partial' && random.next() < SIGNAL_PARTIAL_RECALL)
      if (!sent) continue
      t.changesSignalled++
      add(i, at + (profile === 'late' ? SIGNAL_LATE_DAYS : SIGNAL_TRANSIT_DAYS), at, true)
    }
    if (profile === 'falsePositives') {
      // As many false signals as true ones, at uniform times (at least one page change's worth a run).
      const falseSignals = Math.max(1, Math.round((to - from) * SIGNAL_FALSE_PER_TRUE))
      for (let k = 0; k < falseSignals; k++) {
        const at = random.next() * horizonDays
        add(i, at + SIGNAL_TRANSIT_DAYS, at, false)
      }
    }
    if (profile === 'buildTime') {
      // Every build lists the page; it reports a change only when one happened since the previous build.
      const phase = random.next() * SIGNAL_BUILD_PERIOD_DAYS
      let k = from
      for (let build = phase; build <= horizonDays; build += SIGNAL_BUILD_PERIOD_DAYS) {
        let changedSince = false
        while (k < to && changeDays[k]! <= build) {
          changedSince = true
          t.changesSignalled++
          k++
        }
        add(i, build, Number.NaN, changedSince)
      }
    }
  }
  rows.sort((a, b) => a.received - b.received)
  return {
    events: {
      page: Int32Array.from(rows, (r) => r.page),
      receivedDays: Float64Array.from(rows, (r) => r.received),
      changedDays: Float64Array.from(rows, (r) => r.changed),
      truthful: Uint8Array.from(rows, (r) => (r.truthful ? 1 : 0)),
    },
    truth,
  }
}
