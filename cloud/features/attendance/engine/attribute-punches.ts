import { comparePunches, findDuplicates, uniquePunches } from './pair-punches.js'
import { MINUTE_MICROS, type ShiftInstance } from './shift-instance.js'
import type { EnginePunch, Policy } from './types.js'

/** An instance with its window clipped against its neighbours, and the punches that count for it. */
export interface AttributedInstance extends ShiftInstance {
  /** Once per id, in time order; repeats included (they follow the punch they repeat). */
  punches: EnginePunch[]
}

/**
 * Clips the capture windows of instances on consecutive dates (in date order) so that no instant
 * lies in two of them.
 *
 * - Two scheduled shifts: the earlier keeps everything up to and including its scheduled end, the
 *   later takes everything after (08:00–12:00 then 12:30–16:30 with hour-long windows: a punch at
 *   12:00 is the first shift's OUT, one at 12:01 is the second's). Were the cut at the midpoint
 *   between the shifts, 12:01 would stay with the first: the next shift's early arrivals would
 *   be read as the last shift's late leaving. When the shifts themselves overlap, the cut is at
 *   the later one's start (so does the shared instant of shifts that abut; an OUT there that closes
 *   the earlier shift's IN goes back to it, below). The cut never leaves the two windows' overlap.
 * - A scheduled shift and an unscheduled date: the shift keeps its whole window, since its window
 *   was set for it, and the unscheduled calendar day gets what is left (a shift ending at 00:00
 *   keeps its OUT at 00:00 and the minutes after it).
 * - Two unscheduled dates are consecutive calendar days already.
 *
 * Windows longer than a day could reach past a neighbour; a last pass keeps them disjoint and in
 * order, whatever is configured.
 */
export function clipCaptureWindows(instances: readonly ShiftInstance[]): ShiftInstance[] {
  const clipped = instances.map((instance) => ({ ...instance }))
  for (let i = 1; i < clipped.length; i++) {
    const earlier = clipped[i - 1]!
    const later = clipped[i]!
    if (earlier.captureEnd <= later.captureStart) continue
    if (earlier.scheduledEnd !== null && later.scheduledStart !== null) {
      // +1 µs: the instant of the earlier shift's end stays with it (captureEnd is exclusive).
      const cut = Math.min(earlier.scheduledEnd + 1, later.scheduledStart)
      const boundary = Math.min(Math.max(cut, later.captureStart), earlier.captureEnd)
      earlier.captureEnd = boundary
      later.captureStart = boundary
    } else if (earlier.scheduledEnd !== null) {
      later.captureStart = earlier.captureEnd
    } else {
      earlier.captureEnd = later.captureStart
    }
  }
  for (let i = 0; i < clipped.length; i++) {
    const instance = clipped[i]!
    const previous = clipped[i - 1]
    if (previous) instance.captureStart = Math.max(instance.captureStart, previous.captureEnd)
    instance.captureEnd = Math.max(instance.captureEnd, instance.captureStart)
  }
  return clipped
}

/** The index of the window holding `at` among disjoint windows in order, or -1. */
function windowOf(instances: readonly ShiftInstance[], at: number): number {
  let low = 0
  let high = instances.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    const instance = instances[mid]!
    if (at < instance.captureStart) high = mid - 1
    else if (at >= instance.captureEnd) low = mid + 1
    else return mid
  }
  return -1
}

/**
 * Assigns each punch to at most one of the instances (consecutive dates, in order), which this
 * clips first (`clipCaptureWindows`). A punch goes to the instance whose window holds it, except:
 *
 * - An OUT that follows an IN still open on an earlier instance, within `policy.maxShiftMinutes`
 *   of it, closes that IN. An OUT after midnight must not land on the next day's evening shift
 *   (whose early window reaches back to it) and leave the night before absent; nor is a worker
 *   who stays past the late window left without an OUT. The rule reads directions, so it does
 *   nothing for terminals that send none.
 * - A repeat (same id, or within the duplicate window of a kept punch) goes wherever the punch it
 *   repeats went, so that a re-sent OUT never becomes an orphan on the neighbouring date.
 *
 * A punch outside every window (and closing nothing) is not attributed. The result depends only on
 * the set of punches, never on their order (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 */
export function attributePunches(
  instances: readonly ShiftInstance[],
  punches: readonly EnginePunch[],
  policy: Policy,
): AttributedInstance[] {
  const windows = clipCaptureWindows(instances)
  const unique = uniquePunches(punches)
  const duplicates = findDuplicates(unique, policy)
  const assigned = new Map<string, number>()
  const maxShiftMicros = Math.max(0, policy.maxShiftMinutes) * MINUTE_MICROS
  /** The IN that opened the attendance still open, and where it went. */
  let open: { index: number; at: number } | null = null
  for (const punch of unique) {
    if (duplicates.has(punch.id)) continue
    let index = windowOf(windows, punch.punchedAt)
    if (punch.punchType === 'OUT') {
      if (open && (index < 0 || open.index < index) && punch.punchedAt - open.at <= maxShiftMicros) {
        index = open.index
      }
      open = null
    } else if (index < 0) {
      open = null
    } else if (!open || open.index !== index) {
      open = { index, at: punch.punchedAt }
    }
    if (index >= 0) assigned.set(punch.id, index)
  }
  // A repeat is always later than the punch it repeats, which is kept and already placed.
  for (const [id, keptId] of duplicates) {
    const index = assigned.get(keptId)
    if (index !== undefined) assigned.set(id, index)
  }
  const byInstance: EnginePunch[][] = windows.map(() => [])
  for (const punch of unique) {
    const index = assigned.get(punch.id)
    if (index !== undefined) byInstance[index]!.push(punch)
  }
  return windows.map((window, i) => ({ ...window, punches: byInstance[i]!.sort(comparePunches) }))
}
