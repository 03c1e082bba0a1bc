import type { Transport } from '../config/schema.js'

/** What became of a frame's records. */
export interface AcceptSummary {
  /** Records the frame held: every one is accounted for below. */
  records: number
  /** Stored in the spool now. */
  spooled: number
  /** Of those, punches stored lately already: sent again (the copies are harmless). */
  resent: number
  /** Parked in dead letters (unreadable, implausible, unmapped). */
  deadLettered: number
}

/**
 * Where inputs deliver what devices send. Inputs are transport only: they hand over the bytes of
 * one frame and acknowledge the device (MQTT PUBACK) only when `accept` resolves, by which time the
 * frame's punches are durable in the spool or in dead letters, and says what became of them (an
 * ADMS terminal is told how many records were received). `accept` rejects with a SpoolFullError
 * when the spool refuses: the input must then not acknowledge.
 */
export interface PunchSink {
  accept(deviceId: string, transport: Transport, frame: Buffer): Promise<AcceptSummary>
  /**
   * A frame the input could not even delimit (too long, cut off by a disconnect): what is left of
   * it goes to dead letters, so that nothing a device sent is only in a log.
   */
  rejectFrame(deviceId: string, transport: Transport, raw: Buffer, detail: string): Promise<void>
}
