import type { DayFlag, EnginePunch, Policy, PunchRole } from './types.js'

/** A punch with the part it plays in its day. */
export interface RoledPunch extends EnginePunch {
  role: PunchRole
}

/** A worked interval as punched: `in` or `out` is null where that punch is missing. */
export interface PunchPair {
  in: number | null
  out: number | null
}

export interface PairedPunches {
  /** Every punch given, once per id, in time order, each with its role. */
  punches: RoledPunch[]
  /** In time order. */
  pairs: PunchPair[]
  /** Sorted, without repeats. */
  flags: DayFlag[]
}

/** Time order, then id, then direction: a total order, so the order punches arrived in never matters. */
export function comparePunches(a: EnginePunch, b: EnginePunch): number {
  if (a.punchedAt !== b.punchedAt) return a.punchedAt - b.punchedAt
  if (a.id !== b.id) return a.id < b.id ? -1 : 1
  if (a.punchType !== b.punchType) return a.punchType < b.punchType ? -1 : 1
  return 0
}

/**
 * One punch per id, in time order. A punch re-sent with the same id (an agent retrying an upload)
 * is the same punch and must be counted once.
 */
export function uniquePunches(punches: readonly EnginePunch[]): EnginePunch[] {
  const seen = new Set<string>()
  const unique: EnginePunch[] = []
  for (const punch of [...punches].sort(comparePunches)) {
    if (seen.has(punch.id)) continue
    seen.add(punch.id)
    unique.push({ id: punch.id, punchType: punch.punchType, punchedAt: punch.punchedAt })
  }
  return unique
}

/**
 * The punches that repeat an earlier one: id of the repeat → id of the punch kept. A punch within
 * `duplicateWindowSeconds` of the previous kept punch of the same direction repeats it (a terminal
 * re-sending, or a worker punching again when unsure the first took), whichever device it came
 * from. Under ALTERNATE directions mean nothing, so any punch within the window repeats.
 * `punches` must be unique and in time order (`uniquePunches`).
 */
export function findDuplicates(punches: readonly EnginePunch[], policy: Policy): Map<string, string> {
  const windowMicros = Math.max(0, policy.duplicateWindowSeconds) * 1_000_000
  const lastKept = new Map<string, EnginePunch>()
  const duplicates = new Map<string, string>()
  for (const punch of punches) {
    const key = policy.pairing === 'ALTERNATE' ? 'ANY' : punch.punchType
    const previous = lastKept.get(key)
    if (previous && punch.punchedAt - previous.punchedAt <= windowMicros) {
      duplicates.set(punch.id, previous.id)
    } else {
      lastKept.set(key, punch)
    }
  }
  return duplicates
}

/**
 * Pairs one day's punches into worked intervals by the policy's pairing mode. Repeats (same id, or
 * within the duplicate window) are marked DUPLICATE and take no further part.
 */
export function pairPunches(punches: readonly EnginePunch[], policy: Policy): PairedPunches {
  const unique = uniquePunches(punches)
  const duplicates = findDuplicates(unique, policy)
  const roles = new Map<string, PunchRole>()
  for (const id of duplicates.keys()) roles.set(id, 'DUPLICATE')
  const kept = unique.filter((p) => !duplicates.has(p.id))
  const flags = new Set<DayFlag>()
  let pairs: PunchPair[]
  if (policy.pairing === 'FIRST_LAST') pairs = firstToLast(kept, roles, flags)
  else if (policy.pairing === 'ALTERNATE') pairs = alternate(kept, roles, flags)
  else pairs = tolerant(kept, roles, flags)
  return {
    punches: unique.map((p) => ({ ...p, role: roles.get(p.id) ?? 'IGNORED' })),
    pairs,
    flags: [...flags].sort(),
  }
}

/**
 * IN opens and OUT closes. A second IN while one is open is a repeat: the first is kept, since
 * pairing it with the second would turn a whole day into minutes (IN 08:00, IN 08:02, OUT 17:00
 * must not become 08:00–08:02). An OUT with nothing open closes nothing.
 */
function tolerant(kept: EnginePunch[], roles: Map<string, PunchRole>, flags: Set<DayFlag>): PunchPair[] {
  const pairs: PunchPair[] = []
  let open: EnginePunch | null = null
  for (const punch of kept) {
    if (punch.punchType === 'IN') {
      if (open) {
        roles.set(punch.id, 'DUPLICATE')
        flags.add('DOUBLE_IN')
      } else {
        open = punch
        roles.set(punch.id, 'IN')
      }
    } else if (open) {
      pairs.push({ in: open.punchedAt, out: punch.punchedAt })
      roles.set(punch.id, 'OUT')
      open = null
    } else {
      roles.set(punch.id, 'IGNORED')
      flags.add('ORPHAN_OUT')
    }
  }
  if (open) {
    pairs.push({ in: open.punchedAt, out: null })
    flags.add('MISSING_OUT')
  }
  return pairs
}

/** The first IN to the last OUT after it; the punches between are ignored, not counted as breaks. */
function firstToLast(kept: EnginePunch[], roles: Map<string, PunchRole>, flags: Set<DayFlag>): PunchPair[] {
  for (const punch of kept) roles.set(punch.id, 'IGNORED')
  const firstIn = kept.find((p) => p.punchType === 'IN')
  const lastOut = kept.findLast((p) => p.punchType === 'OUT')
  // An OUT before the first IN closes nothing (often the previous night's, left behind).
  if (firstIn && kept.some((p) => p.punchType === 'OUT' && p.punchedAt < firstIn.punchedAt)) {
    flags.add('ORPHAN_OUT')
  }
  if (firstIn && lastOut && lastOut.punchedAt > firstIn.punchedAt) {
    roles.set(firstIn.id, 'IN')
    roles.set(lastOut.id, 'OUT')
    return [{ in: firstIn.punchedAt, out: lastOut.punchedAt }]
  }
  if (firstIn) {
    roles.set(firstIn.id, 'IN')
    flags.add('MISSING_OUT')
    return [{ in: firstIn.punchedAt, out: null }]
  }
  if (lastOut) {
    roles.set(lastOut.id, 'OUT')
    flags.add('MISSING_IN')
    return [{ in: null, out: lastOut.punchedAt }]
  }
  return []
}

/** Directions are ignored (terminals in AUTO mode): punches alternate IN, OUT, IN, OUT in time order. */
function alternate(kept: EnginePunch[], roles: Map<string, PunchRole>, flags: Set<DayFlag>): PunchPair[] {
  const pairs: PunchPair[] = []
  for (let i = 0; i < kept.length; i += 2) {
    const first = kept[i]!
    const second = kept[i + 1]
    roles.set(first.id, 'IN')
    if (second) {
      roles.set(second.id, 'OUT')
      pairs.push({ in: first.punchedAt, out: second.punchedAt })
    } else {
      pairs.push({ in: first.punchedAt, out: null })
      flags.add('MISSING_OUT')
    }
  }
  return pairs
}
