/**
 * What an input can tell about its devices beyond the event bus, and what it can be asked to do to
 * them. Status and the CLI reach the inputs through these two interfaces only: an input that
 * speaks to terminals (ADMS now) implements them; serial and MQTT inputs need not.
 */

/** A terminal's own figures, as far as it has said them. */
export interface TerminalCounts {
  users: number | null
  fingerprints: number | null
  faces: number | null
  attendanceRecords: number | null
  userCapacity: number | null
  fingerprintCapacity: number | null
  faceCapacity: number | null
  attendanceCapacity: number | null
}

/** A command sent (or to be sent) to a terminal. */
export interface DeviceCommandStatus {
  id: string
  kind: string
  /** The command as sent, e.g. `DATA QUERY ATTLOG StartTime=...`. */
  text: string
  state: 'queued' | 'sent' | 'done' | 'failed'
  queuedAt: string
  sentAt: string | null
  doneAt: string | null
  returnCode: number | null
  reason: string | null
}

/** Health of a networked terminal (`hajri-agent status`, `/status`, `/metrics`). */
export interface DeviceDetails {
  /** How the agent speaks to it, e.g. `adms`. */
  protocol: string
  serialNumber: string
  /** Where its requests last came from. */
  address: string | null
  /** Its protocol version, e.g. `push 2.4.1`. */
  protocolVersion: string | null
  model: string | null
  firmware: string | null
  lastContactAt: string | null
  lastHandshakeAt: string | null
  lastUploadAt: string | null
  /** Records it uploaded since the agent started (each stored in the spool or in dead letters). */
  recordsReceived: number
  uploads: number
  counts: TerminalCounts
  /** Attendance records over capacity, 0..1, when both are known. */
  logUse: number | null
  commands: DeviceCommandStatus[]
}

/** A terminal that contacted the agent with a serial number no device has. */
export interface UnknownDevice {
  serialNumber: string
  address: string
  firstSeenAt: string
  lastSeenAt: string
  requests: number
}

export interface DeviceReport {
  /** By device id. */
  devices: Record<string, DeviceDetails>
  unknownDevices: UnknownDevice[]
}

/** An input whose devices have details for status. */
export interface DeviceReporter {
  report(): DeviceReport
}

/** A request to a device that it cannot take (not one of this input's, or not that kind). */
export class DeviceCommandError extends Error {
  constructor(
    readonly code: 'device_not_found' | 'not_supported' | 'invalid_range',
    message: string,
  ) {
    super(message)
    this.name = 'DeviceCommandError'
  }
}

/** An input whose devices can be asked for their records again (IT staff's `devices backfill`). */
export interface DeviceBackfill {
  /** Whether this input has the device. */
  has(deviceId: string): boolean
  /** Queues the request; `from`/`to` in µs. Resolves once it is durably queued. */
  backfill(deviceId: string, from: number, to: number): Promise<DeviceCommandStatus>
}

export function isDeviceReporter<T extends object>(value: T): value is T & DeviceReporter {
  return typeof (value as Partial<DeviceReporter>).report === 'function'
}

export function isDeviceBackfill<T extends object>(value: T): value is T & DeviceBackfill {
  const candidate = value as Partial<DeviceBackfill>
  return typeof candidate.backfill === 'function' && typeof candidate.has === 'function'
}
