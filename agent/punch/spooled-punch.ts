/**
 * A punch the agent has made sense of and keeps until the cloud has it
 * (docs/development/architecture.md#the-agents-guarantees).
 */
export interface SpooledPunch {
  /** Deterministic (see punch-id.ts): the cloud's externalId and Idempotency-Key. */
  id: string
  deviceId: string
  employeeCode: string
  punchType: 'IN' | 'OUT'
  /** RFC 3339 with the device's offset. */
  punchedAt: string
  /** When the agent read it (RFC 3339, UTC). */
  receivedAt: string
}

/** Why a punch or frame was parked instead of forwarded. */
export type DeadLetterReason =
  | 'device_clock_invalid'
  | 'malformed_frame'
  | 'invalid_punch'
  | 'status_unmapped'
  | 'rejected_by_cloud'

/** Something the agent could not forward, kept for an operator to list, fix and replay. */
export interface DeadLetter {
  /** `dlt_...` */
  id: string
  at: string
  deviceId: string
  reason: DeadLetterReason
  detail: string
  /** The punch, when there was one to make. */
  punch?: SpooledPunch
  /** The frame as received, when it could not be read (UTF-8, truncated). */
  raw?: string
  /** The cloud's RFC 9457 problem, for rejected_by_cloud. */
  problem?: Record<string, unknown>
}
