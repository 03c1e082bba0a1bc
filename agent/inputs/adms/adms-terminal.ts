import type { Logger } from 'pino'
import { addressMatcher } from '../../config/address-range.js'
import type { DeviceConfig } from '../../config/schema.js'
import type { DeviceCommandStatus, DeviceDetails } from '../device-report.js'
import type { AdmsDeviceStore, StoredCommand } from './adms-device-store.js'
import { attendanceLogUse } from './terminal-info.js'

/** A configured push terminal, and what the agent has seen of it since it started. */
export interface AdmsTerminal {
  deviceId: string
  serialNumber: string
  /** The zone its wall times are read in, and announced to it (TimeZone). */
  timeZone: string
  /** The device's own `adms.allowFrom`, when it has one. */
  allows: ((address: string) => boolean) | undefined
  log: Logger
  state: 'waiting' | 'connected' | 'disconnected'
  address: string | null
  protocolVersion: string | null
  lastContactMs: number | null
  lastHandshakeMs: number | null
  lastUploadMs: number | null
  recordsReceived: number
  uploads: number
}

/** The terminals of the devices with an `adms` section. */
export function createTerminals(
  devices: readonly DeviceConfig[],
  siteTimeZone: string,
  log: Logger,
): AdmsTerminal[] {
  const terminals: AdmsTerminal[] = []
  for (const device of devices) {
    if (!device.adms) continue
    terminals.push({
      deviceId: device.id,
      serialNumber: device.adms.serialNumber,
      timeZone: device.timezone ?? siteTimeZone,
      allows: device.adms.allowFrom ? addressMatcher(device.adms.allowFrom) : undefined,
      log: log.child({ deviceId: device.id, serialNumber: device.adms.serialNumber }),
      state: 'waiting',
      address: null,
      protocolVersion: null,
      lastContactMs: null,
      lastHandshakeMs: null,
      lastUploadMs: null,
      recordsReceived: 0,
      uploads: 0,
    })
  }
  return terminals
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export function commandStatus(command: StoredCommand): DeviceCommandStatus {
  return {
    id: command.id,
    kind: command.kind,
    text: command.text,
    state: command.state,
    queuedAt: command.queuedAt,
    sentAt: command.sentAt ?? null,
    doneAt: command.doneAt ?? null,
    returnCode: command.returnCode ?? null,
    reason: command.reason ?? null,
  }
}

/** A terminal's health for status and metrics: what it said of itself, and what the agent saw. */
export function terminalDetails(t: AdmsTerminal, store: AdmsDeviceStore): DeviceDetails {
  const info = store.info(t.serialNumber)
  return {
    protocol: 'adms',
    serialNumber: t.serialNumber,
    address: t.address,
    protocolVersion: t.protocolVersion,
    model: info.model ?? null,
    firmware: info.firmware ?? null,
    lastContactAt: iso(t.lastContactMs),
    lastHandshakeAt: iso(t.lastHandshakeMs),
    lastUploadAt: iso(t.lastUploadMs),
    recordsReceived: t.recordsReceived,
    uploads: t.uploads,
    counts: {
      users: info.users ?? null,
      fingerprints: info.fingerprints ?? null,
      faces: info.faces ?? null,
      attendanceRecords: info.attendanceRecords ?? null,
      userCapacity: info.userCapacity ?? null,
      fingerprintCapacity: info.fingerprintCapacity ?? null,
      faceCapacity: info.faceCapacity ?? null,
      attendanceCapacity: info.attendanceCapacity ?? null,
    },
    logUse: attendanceLogUse(info) ?? null,
    commands: store.commands(t.serialNumber).map(commandStatus),
  }
}
