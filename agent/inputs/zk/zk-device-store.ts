import { mkdir, rename } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Logger } from 'pino'
import { DurableJsonFile, syncDirectory } from '../../spool/durable-json-file.js'
import { EMPTY_ZK_CURSOR, type ZkLogCursor } from './zk-log-cursor.js'

/** Something about a terminal's log that IT staff should know: it changed in a way it should not. */
export interface ZkLogNotice {
  at: string
  kind: 'log_cleared' | 'log_shifted' | 'clock_back' | 'log_cleared_by_command'
  message: string
}

/** What the terminal said of itself. */
export interface ZkStoredInfo {
  serialNumber?: string
  platform?: string
  firmware?: string
}

interface StoredDevice {
  cursor: ZkLogCursor
  info: ZkStoredInfo
  lastReadAt?: string
  notices: ZkLogNotice[]
}

interface StoreFile {
  kind: 'hajri-zk-devices'
  version: 1
  devices: Record<string, StoredDevice>
}

/** Notices kept per device, newest last. */
const KEPT_NOTICES = 20

/**
 * What the agent keeps about the terminals it reads over port 4370, in one small JSON file beside
 * the spool (`devices/zk.json`): each one's log cursor (zk-log-cursor.ts), what it said of itself,
 * and what changed on its log. A cursor is written, fsynced, only after the records it counts are
 * stored; if it is lost (a crash in between, a deleted file) the agent reads those records again,
 * and the punch ids make the copies harmless (docs/decisions/0025-punch-id.md).
 */
export class ZkDeviceStore {
  private data: StoreFile = { kind: 'hajri-zk-devices', version: 1, devices: {} }
  private readonly file: DurableJsonFile<StoreFile>
  private saving: Promise<void> = Promise.resolve()

  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new DurableJsonFile<StoreFile>(path)
  }

  async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true })
    let read: StoreFile | null = null
    try {
      read = await this.file.read()
    } catch (err) {
      // Kept aside for a person, and started afresh: every log is read whole once more, and the
      // punch ids make what was stored before harmless.
      const aside = `${this.path}.unreadable-${this.now()}`
      await rename(this.path, aside).catch(() => {})
      this.log.error({ err, movedTo: aside }, 'ZK device state unreadable: reading every log whole again')
    }
    if (read?.kind === 'hajri-zk-devices' && read.version === 1 && typeof read.devices === 'object') {
      this.data = read
    }
  }

  private device(deviceId: string): StoredDevice {
    let device = this.data.devices[deviceId]
    if (!device) {
      device = { cursor: EMPTY_ZK_CURSOR, info: {}, notices: [] }
      this.data.devices[deviceId] = device
    }
    return device
  }

  cursor(deviceId: string): ZkLogCursor {
    return this.data.devices[deviceId]?.cursor ?? EMPTY_ZK_CURSOR
  }

  info(deviceId: string): ZkStoredInfo {
    return this.data.devices[deviceId]?.info ?? {}
  }

  lastReadAt(deviceId: string): string | undefined {
    return this.data.devices[deviceId]?.lastReadAt
  }

  notices(deviceId: string): readonly ZkLogNotice[] {
    return this.data.devices[deviceId]?.notices ?? []
  }

  /** Keeps the cursor durably; resolves once it is on disk. */
  async setCursor(deviceId: string, cursor: ZkLogCursor, read: boolean): Promise<void> {
    const device = this.device(deviceId)
    device.cursor = cursor
    if (read) device.lastReadAt = new Date(this.now()).toISOString()
    await this.save()
  }

  async setInfo(deviceId: string, info: ZkStoredInfo): Promise<void> {
    const device = this.device(deviceId)
    if (JSON.stringify(device.info) === JSON.stringify(info)) return
    device.info = info
    await this.save()
  }

  /** Adds a notice (written with the next save). */
  notice(deviceId: string, kind: ZkLogNotice['kind'], message: string): void {
    const device = this.device(deviceId)
    device.notices.push({ at: new Date(this.now()).toISOString(), kind, message })
    if (device.notices.length > KEPT_NOTICES) device.notices.splice(0, device.notices.length - KEPT_NOTICES)
  }

  /** One write at a time, each of the whole state as it is when it starts. */
  private save(): Promise<void> {
    const write = async () => {
      await this.file.write(this.data)
      await syncDirectory(dirname(this.path))
    }
    const next = this.saving.then(write, write)
    this.saving = next.catch(() => undefined)
    return next
  }
}
