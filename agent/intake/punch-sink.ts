/** How a frame reached the agent: each device names a record format per transport. */
export type Transport = 'mqtt' | 'serial'

/**
 * Where inputs deliver what devices send. Inputs are transport only: they hand over the bytes of
 * one frame and acknowledge the device (MQTT PUBACK) only when `accept` resolves, by which time the
 * frame's punches are durable in the spool or in dead letters. `accept` rejects with a
 * SpoolFullError when the spool refuses: the input must then not acknowledge.
 */
export interface PunchSink {
  accept(deviceId: string, transport: Transport, frame: Buffer): Promise<void>
  /**
   * A frame the input could not even delimit (too long, cut off by a disconnect): what is left of
   * it goes to dead letters, so that nothing a device sent is only in a log.
   */
  rejectFrame(deviceId: string, transport: Transport, raw: Buffer, detail: string): Promise<void>
}
