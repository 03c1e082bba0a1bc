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
  /** A terminal the agent reads (ZK over port 4370): how the reading goes. */
  pull?: PullDetails
}

/** Health of a terminal the agent reads, rather than one that sends. */
export interface PullDetails {
  transport: string
  pollEverySeconds: number
  realtime: boolean
  /** Records of its log the agent has stored (its cursor). */
  recordsRead: number
  lastReadAt: string | null
  /** Device clock minus the agent's, read with the device's get-time. */
  clockSkewSeconds: number | null
  clockCheckedAt: string | null
  /** Sessions that failed or were lost since the agent started. */
  connectionErrors: number
  lastError: { at: string; code: string; message: string } | null
  /** Changes to its log IT staff should know of: cleared, dropped records, clock set back. */
  notices: { at: string; kind: string; message: string }[]
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
    readonly code: 'device_not_found' | 'not_supported' | 'invalid_range' | 'device_unreachable' | 'not_safe',
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

/** What a terminal's clock read after `devices set-time`. */
export interface DeviceClockResult {
  /** The device's wall time after setting, `YYYY-MM-DDTHH:mm:ss` (it has no zone). */
  deviceTime: string
  skewSeconds: number
}

/**
 * An input whose terminals IT staff may change on request (`devices set-time`, `devices
 * clear-log`): ZK terminals read over port 4370.
 */
export interface DeviceControl {
  has(deviceId: string): boolean
  setTime(deviceId: string): Promise<DeviceClockResult>
  /**
   * Clears the terminal's attendance log once `unsettled` finds none of its punches short of the
   * cloud (it returns why not, or undefined).
   */
  clearLog(
    deviceId: string,
    unsettled: (deviceId: string) => Promise<string | undefined>,
  ): Promise<{ cleared: number }>
}

export function isDeviceControl<T extends object>(value: T): value is T & DeviceControl {
  const candidate = value as Partial<DeviceControl>
  return typeof candidate.clearLog === 'function' && typeof candidate.setTime === 'function'
}
