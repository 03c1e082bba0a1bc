import { join } from 'node:path'
import type { Logger } from 'pino'
import type { DeviceConfig, ZkDeviceConfig } from '../../config/schema.js'
import type { EventBus } from '../../events.js'
import type { PunchSink } from '../../intake/punch-sink.js'
import {
  type DeviceClockResult,
  DeviceCommandError,
  type DeviceControl,
  type DeviceDetails,
  type DeviceReport,
  type DeviceReporter,
} from '../device-report.js'
import type { SerialBackoff } from '../serial-backoff-delay.js'
import { ZkClient } from './zk-client.js'
import { ZkDeviceStore } from './zk-device-store.js'
import { type ZkConnect, ZkTerminal } from './zk-terminal.js'

export interface ZkInputOptions {
  /** All devices; those with a `zk` section are read. */
  devices: readonly DeviceConfig[]
  siteTimeZone: string
  /** The spool's directory: the terminals' cursors are kept beside it. */
  spoolDir: string
  sink: PunchSink
  events: EventBus
  log: Logger
  /** ZkClient.connect by default; tests may pass their own. */
  connect?: ZkConnect
  now?: () => number
  random?: () => number
  reconnectBackoff?: SerialBackoff
}

const hasZk = (device: DeviceConfig): device is DeviceConfig & { zk: ZkDeviceConfig } =>
  device.zk !== undefined

/**
 * The terminals the agent reads over the ZK protocol on port 4370, one ZkTerminal each, and their
 * state file (`devices/zk.json` in the spool directory).
 */
export class ZkInput implements DeviceReporter, DeviceControl {
  private readonly store: ZkDeviceStore
  private readonly terminals = new Map<string, ZkTerminal>()

  constructor(options: ZkInputOptions) {
    const log = options.log.child({ component: 'zk' })
    this.store = new ZkDeviceStore(join(options.spoolDir, 'devices', 'zk.json'), log, options.now)
    for (const device of options.devices.filter(hasZk)) {
      this.terminals.set(
        device.id,
        new ZkTerminal({
          device,
          siteTimeZone: options.siteTimeZone,
          store: this.store,
          sink: options.sink,
          events: options.events,
          log,
          connect: options.connect ?? ((o) => ZkClient.connect(o)),
          ...(options.now && { now: options.now }),
          ...(options.random && { random: options.random }),
          ...(options.reconnectBackoff && { reconnectBackoff: options.reconnectBackoff }),
        }),
      )
    }
  }

  async start(): Promise<void> {
    await this.store.open()
    for (const terminal of this.terminals.values()) terminal.start()
  }

  async stop(): Promise<void> {
    await Promise.all([...this.terminals.values()].map((t) => t.stop()))
  }

  has(deviceId: string): boolean {
    return this.terminals.has(deviceId)
  }

  private terminal(deviceId: string): ZkTerminal {
    const terminal = this.terminals.get(deviceId)
    if (!terminal) throw new DeviceCommandError('device_not_found', `${deviceId} is not a ZK terminal`)
    return terminal
  }

  setTime(deviceId: string): Promise<DeviceClockResult> {
    return this.terminal(deviceId).setTime()
  }

  clearLog(
    deviceId: string,
    unsettled: (deviceId: string) => Promise<string | undefined>,
  ): Promise<{ cleared: number }> {
    return this.terminal(deviceId).clearLog(unsettled)
  }

  report(): DeviceReport {
    const devices: Record<string, DeviceDetails> = {}
    for (const [id, terminal] of this.terminals) devices[id] = terminal.report()
    return { devices, unknownDevices: [] }
  }
}
