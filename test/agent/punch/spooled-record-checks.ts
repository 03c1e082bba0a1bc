/**
 * What a well-formed record in the agent's spool and dead letters is (no input may leave
 * a malformed record stored), for the fuzz tests of the serial and MQTT inputs. A spooled punch
 * is one the cloud can take as it is: the body the forwarder makes of it (agent/uplink/punch-uplink.ts)
 * passes the cloud's own PunchInput validation, its time is a real instant within the plausible
 * window, and its id is the hash of what it says (docs/decisions/0025-punch-id.md). A dead letter says which
 * device, why, and keeps what it was (the punch, or at most 1,024 characters of the frame).
 */

import { punchId } from '../../../agent/punch/punch-id.js'
import type { DeadLetter, DeadLetterReason, SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { compileCheck } from '../../../cloud/validation.js'
import { PunchInputSchema } from '../../../shared/punch.js'
import { parseTimestamp } from '../../../shared/time.js'

const checkPunchInput = compileCheck(PunchInputSchema)
const REASONS: readonly DeadLetterReason[] = [
  'device_clock_invalid',
  'malformed_frame',
  'invalid_punch',
  'status_unmapped',
  'rejected_by_cloud',
]
const MAX_AHEAD = 5 * 60 * 1_000_000

export interface RecordContext {
  deviceIds: readonly string[]
  /** µs: the agent's clock now (a punch was read before). */
  now: () => number
  /** µs: site.clockFloor. */
  clockFloor: number
}

/** The cloud's body for a punch, as PunchUplink sends it. */
const toInput = (punch: SpooledPunch) => ({
  employeeCode: punch.employeeCode,
  punchType: punch.punchType,
  punchedAt: punch.punchedAt,
  deviceId: punch.deviceId,
  source: 'hajri-agent',
  externalId: punch.id,
})

/** What is wrong with a punch as stored; `window` also bounds its time (not for a parked clock). */
function punchProblems(punch: SpooledPunch, context: RecordContext, window: boolean): string[] {
  const where = `punch ${JSON.stringify(punch).slice(0, 300)}`
  const problems: string[] = []
  const keys = Object.keys(punch).sort().join(',')
  if (keys !== 'deviceId,employeeCode,id,punchType,punchedAt,receivedAt')
    problems.push(`${where}: fields ${keys}`)
  const checked = checkPunchInput(toInput(punch))
  if (!checked.ok) problems.push(`${where}: the cloud would refuse it: ${JSON.stringify(checked.errors)}`)
  if (!context.deviceIds.includes(punch.deviceId)) problems.push(`${where}: an unknown device`)
  const received = parseTimestamp(punch.receivedAt)
  if (received === undefined || received < context.clockFloor || received > context.now()) {
    problems.push(`${where}: receivedAt is not when it was read`)
  }
  const at = parseTimestamp(punch.punchedAt)
  if (at === undefined) problems.push(`${where}: punchedAt is not a time`)
  else {
    if (window && (at < context.clockFloor || at > (received ?? 0) + MAX_AHEAD)) {
      problems.push(`${where}: punchedAt outside the plausible window`)
    }
    if (punch.id !== punchId(punch.deviceId, punch.employeeCode, at, punch.punchType)) {
      problems.push(`${where}: its id is not the hash of what it says`)
    }
  }
  return problems
}

export function spooledPunchProblems(punch: SpooledPunch, context: RecordContext): string[] {
  return punchProblems(punch, context, true)
}

export function deadLetterProblems(entry: DeadLetter, context: RecordContext): string[] {
  const where = `dead letter ${JSON.stringify(entry).slice(0, 300)}`
  const problems: string[] = []
  if (!/^dlt_[0-9A-HJKMNP-TV-Z]{26}$/.test(entry.id)) problems.push(`${where}: id`)
  if (parseTimestamp(entry.at) === undefined) problems.push(`${where}: at is not a time`)
  if (!context.deviceIds.includes(entry.deviceId)) problems.push(`${where}: an unknown device`)
  if (!REASONS.includes(entry.reason)) problems.push(`${where}: reason`)
  if (typeof entry.detail !== 'string' || entry.detail.length === 0 || entry.detail.length > 2000) {
    problems.push(`${where}: detail`)
  }
  if (entry.punch === undefined && entry.raw === undefined)
    problems.push(`${where}: neither a punch nor the frame`)
  if (entry.raw !== undefined && (typeof entry.raw !== 'string' || entry.raw.length > 1024)) {
    problems.push(`${where}: raw is not at most 1,024 characters of text`)
  }
  if (entry.punch) problems.push(...punchProblems(entry.punch, context, false))
  if (entry.reason === 'device_clock_invalid' && !entry.punch)
    problems.push(`${where}: a parked clock without its punch`)
  return problems
}
