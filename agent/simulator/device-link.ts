/**
 * How the simulated device reaches the agent: an MQTT connection or a serial port. A record
 * counts as delivered when `send` resolves: on its PUBACK over MQTT (for the agent's embedded broker,
 * that means durable in the spool), once handed to the operating system over serial (a serial line
 * has no acknowledgement).
 */
export interface DeviceLink {
  /** What the summary calls a delivered record: "acknowledged" or "written". */
  readonly deliveredAs: 'acknowledged' | 'written'
  /** The broker or port, for messages (never with a password). */
  readonly target: string
  /** Connects; rejects with DeviceUnreachableError when the broker or port cannot be reached. */
  open(): Promise<void>
  /**
   * Sends one record. Resolves once it is delivered; rejects only when it never will be (the port
   * vanished, the link was closed first). A lost MQTT connection is not that: the record is sent
   * again once the link reconnects, as a device keeps a punch until it is acknowledged.
   */
  send(record: string): Promise<void>
  /** Lets go of the link; sends still waiting reject. A serial port is drained first. */
  close(): Promise<void>
}

/** The broker or serial port could not be reached at the start: `hajri-agent simulate` exits 1. */
export class DeviceUnreachableError extends Error {
  readonly code = 'device_unreachable'

  constructor(message: string) {
    super(message)
    this.name = 'DeviceUnreachableError'
  }
}

/** A record the link gave up on: closed before it was delivered, or the port went away. */
export class RecordNotDeliveredError extends Error {
  readonly code = 'record_not_delivered'

  constructor(message: string) {
    super(message)
    this.name = 'RecordNotDeliveredError'
  }
}
