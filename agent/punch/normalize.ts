import { EMPLOYEE_CODE_PATTERN } from '../../shared/employee.js'
import { formatInZone, formatServerTime, parseLocalTimestamp, parseTimestamp } from '../../shared/time.js'
import type { DevicePunch } from './device-punch.js'
import { punchId } from './punch-id.js'
import type { DeadLetterReason, SpooledPunch } from './spooled-punch.js'

/**
 * The ZKTeco/eSSL status codes, unless a device maps them otherwise
 * (docs/decisions/0028-zk-attlog-and-status-codes.md).
 */
export const DEFAULT_STATUS_MAP: Readonly<Record<string, 'IN' | 'OUT'>> = {
  '0': 'IN', // check-in
  '1': 'OUT', // check-out
  '2': 'OUT', // break-out
  '3': 'IN', // break-in
  '4': 'IN', // overtime-in
  '5': 'OUT', // overtime-out
}

/** A device clock this far ahead of the agent's is wrong, not early (the cloud's limit too). */
const MAX_AHEAD_MICROS = 5 * 60 * 1_000_000

const EMPLOYEE_CODE = new RegExp(EMPLOYEE_CODE_PATTERN)

export interface NormalizeContext {
  deviceId: string
  timeZone: string
  /** µs: a punch before this comes from a device whose clock was reset. */
  clockFloor: number
  statusMap?: Readonly<Record<string, 'IN' | 'OUT'>>
  /** A reader that only ever records one direction (separate entry and exit readers). */
  fixedPunchType?: 'IN' | 'OUT'
  /** How the device's PIN becomes the employee code (site.pin, or the device's own). */
  pin?: PinRule
  /** µs: when the agent received the frame. */
  now: number
  /** `now` as RFC 3339 (formatServerTime), made once per frame rather than once per punch. */
  receivedAt?: string
}

type Normalized =
  /** `at`: the punch's instant, µs. */
  | { ok: true; punch: SpooledPunch; at: number }
  /** `punch` is there when one could be made (a wrong clock): an operator may still replay it. */
  | { ok: false; reason: DeadLetterReason; detail: string; punch?: SpooledPunch }

export interface PinRule {
  prefix?: string
  width?: number
}

/**
 * The employee code of a PIN: numeric PINs zero-padded to `width`, then `prefix` put in front
 * (PIN 42 with { prefix: 'E', width: 4 } is E0042). Sites whose terminals were enrolled with plain
 * numbers need it; without a rule the PIN is the code.
 */
export function applyPinRule(pin: string, rule: PinRule | undefined): string {
  if (!rule) return pin
  const padded = rule.width !== undefined && /^\d+$/.test(pin) ? pin.padStart(rule.width, '0') : pin
  return `${rule.prefix ?? ''}${padded}`
}

/** Makes a spoolable punch of a device's record, or says why it must be parked. */
export function normalizePunch(record: DevicePunch, context: NormalizeContext): Normalized {
  const employeeCode = applyPinRule(record.employeeCode, context.pin)
  if (!EMPLOYEE_CODE.test(employeeCode)) {
    return {
      ok: false,
      reason: 'invalid_punch',
      detail: `employee code "${employeeCode.slice(0, 80)}" is not one Hajri accepts`,
    }
  }
  let punchType = context.fixedPunchType ?? record.punchType
  if (punchType === undefined) {
    if (record.status === undefined)
      return {
        ok: false,
        reason: 'invalid_punch',
        detail: 'the record has neither a punch type nor a status',
      }
    punchType = (context.statusMap ?? DEFAULT_STATUS_MAP)[record.status]
    if (punchType === undefined) {
      return {
        ok: false,
        reason: 'status_unmapped',
        detail: `status ${record.status} is not in the device's statusMap`,
      }
    }
  }
  let at: number | undefined = context.now
  if (record.punchedAt !== undefined) {
    at = parseTimestamp(record.punchedAt) ?? parseLocalTimestamp(record.punchedAt, context.timeZone)
    if (at === undefined)
      return {
        ok: false,
        reason: 'invalid_punch',
        detail: `punchedAt "${record.punchedAt.slice(0, 40)}" is not a time`,
      }
  }
  const punch: SpooledPunch = {
    id: punchId(context.deviceId, employeeCode, at, punchType),
    deviceId: context.deviceId,
    employeeCode,
    punchType,
    punchedAt: formatInZone(at, context.timeZone),
    receivedAt: context.receivedAt ?? formatServerTime(context.now),
  }
  if (at < context.clockFloor || at > context.now + MAX_AHEAD_MICROS) {
    return {
      ok: false,
      reason: 'device_clock_invalid',
      detail: `the device says ${punch.punchedAt}, the agent's clock ${formatInZone(context.now, context.timeZone)}`,
      punch,
    }
  }
  return { ok: true, punch, at }
}
