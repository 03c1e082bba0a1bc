import { createHash } from 'node:crypto'
import { hashApiKey } from '../../../cloud/features/api-keys/api-key-format.js'
import { localDate } from '../../../cloud/features/attendance/work-dates.js'
import { punchFingerprint } from '../../../cloud/features/punches/punch-fingerprint.js'
import { newId } from '../../../shared/ids.js'
import type { Punch, PunchInput } from '../../../shared/punch.js'
import { formatInZone, formatServerTime, parseTimestamp } from '../../../shared/time.js'

/**
 * What the hand-written punch routes (hand-written-sqlite-punch-server.ts,
 * hand-written-pg-punch-server.ts) compute in JavaScript before their database work: the same
 * rows, with the same ids, fingerprint, event body and attendance day as the cloud writes, so a
 * stored row costs the same bytes. Validation is a few typeof checks, not the cloud's schema.
 */
export interface PunchRows {
  punch: Punch
  punchedAt: number
  receivedAt: number
  fingerprint: string
  eventId: string
  eventBody: string
  eventBytes: number
  eventSha256: string
  localDate: string
}

const optional = (v: unknown) => v === undefined || v === null || typeof v === 'string'

/** A punch body of the right shape, or undefined. */
export function readPunch(body: unknown): PunchInput | undefined {
  const b = body as Record<string, unknown> | null
  if (typeof b !== 'object' || b === null) return undefined
  if (typeof b.employeeCode !== 'string' || (b.punchType !== 'IN' && b.punchType !== 'OUT')) return undefined
  if (!optional(b.punchedAt) || !optional(b.deviceId) || !optional(b.source) || !optional(b.externalId))
    return undefined
  return b as unknown as PunchInput
}

export function bearerKeyHash(authorization: string | undefined): string | undefined {
  const key = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1]
  return key === undefined ? undefined : hashApiKey(key)
}

export function punchRows(input: PunchInput, now: number, timeZone: string): PunchRows {
  const parsed = input.punchedAt == null ? null : (parseTimestamp(input.punchedAt) ?? null)
  const at = parsed ?? now
  const punch: Punch = {
    id: newId('punch', Math.floor(now / 1000)),
    employeeCode: input.employeeCode,
    punchType: input.punchType,
    punchedAt: formatInZone(at, timeZone),
    receivedAt: formatServerTime(now),
    deviceId: input.deviceId ?? null,
    source: input.source ?? null,
    externalId: input.externalId ?? null,
  }
  const eventBody = JSON.stringify({
    type: 'attendance.punch.created',
    timestamp: punch.receivedAt,
    data: punch,
  })
  return {
    punch,
    punchedAt: at,
    receivedAt: now,
    fingerprint: punchFingerprint(input, parsed),
    eventId: newId('webhookEvent', Math.floor(now / 1000)),
    eventBody,
    eventBytes: Buffer.byteLength(eventBody),
    eventSha256: createHash('sha256').update(eventBody).digest('hex'),
    localDate: localDate(at, timeZone),
  }
}
