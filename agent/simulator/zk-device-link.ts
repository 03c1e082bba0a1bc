import { formatInZone, nowMicros } from '../../shared/time.js'
import { type DeviceLink, DeviceUnreachableError, RecordNotDeliveredError } from './device-link.js'
import type { ZkRecordSize } from './zk-device/zk-attendance-log.js'
import { ZkDevice } from './zk-device/zk-device.js'
import type { ZkPunch } from './zk-device/zk-device-options.js'
import { fromNaiveMs, naiveMs } from './zk-device/zk-time.js'

interface ZkDeviceLinkOptions {
  /** Where the terminal listens, TCP and UDP on one port number (0: any free one). */
  host: string
  port: number
  recordSize: ZkRecordSize
  /** 0: none. */
  commKey: number
  serialNumber?: string
  /** The terminal's clock is set to the wall time in this zone when it starts, as a site sets it. */
  timeZone: string
  /** Records already in the log when it starts, before the first punch. */
  records: number
  /** How many records the log holds; a punch past them is not written. */
  recordCapacity: number
  /** Whose punches those records are, in turn. */
  employees: readonly string[]
  notice: (message: string) => void
}

/** The ATTLOG line deviceRecord writes: PIN, local time, status, verify, work code. */
const ATTLOG_LINE = /^([^\t]+)\t(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\t(\d+)\t(\d+)\t(\d+)$/

/**
 * The simulated device as a ZKTeco-family terminal on port 4370 (the ZK binary protocol: the
 * emulator in zk-device/): the agent is the one that connects, and pulls the log. A punch is made at
 * the terminal and counts as written once it is in the terminal's log, from where the agent reads it
 * (and hears it at once when it asked for real-time events). Punches come as ATTLOG lines, the
 * terminal's own log format (docs/decisions/0028-zk-attlog-and-status-codes.md).
 *
 * close() ends the punches, not the terminal: a device keeps serving its log when nobody punches.
 * stop() takes the terminal off the network.
 */
export class ZkDeviceLink implements DeviceLink {
  readonly deliveredAs = 'written'
  readonly device: ZkDevice
  private punching = false

  constructor(private readonly options: ZkDeviceLinkOptions) {
    this.device = new ZkDevice({
      host: options.host,
      port: options.port,
      recordSize: options.recordSize,
      commKey: options.commKey,
      recordCapacity: options.recordCapacity,
      time: formatInZone(nowMicros(), options.timeZone).slice(0, 19),
      ...(options.serialNumber === undefined ? {} : { serialNumber: options.serialNumber }),
    })
  }

  /** host:port, once listening. */
  get address(): string {
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host
    return `${host}:${this.device.port}`
  }

  get target(): string {
    return `the ZK terminal on ${this.address}`
  }

  async open(): Promise<void> {
    try {
      await this.device.start()
    } catch (err) {
      await this.device.stop()
      throw new DeviceUnreachableError(
        `cannot listen on ${this.options.host}:${this.options.port} (TCP and UDP): ${(err as Error).message}`,
      )
    }
    this.prefill()
    this.punching = true
    const { recordSize, commKey } = this.options
    this.options.notice(
      `a ZK terminal listens on ${this.address}, TCP and UDP: serial number ${this.device.serialNumber}, ` +
        `${recordSize}-byte records, ${commKey === 0 ? 'no comm key' : 'a comm key'}, ` +
        `${this.device.recordCount} record(s) in its log`,
    )
  }

  send(record: string): Promise<void> {
    if (!this.punching)
      return Promise.reject(new RecordNotDeliveredError('the ZK terminal takes no more punches'))
    const line = ATTLOG_LINE.exec(record)
    if (!line) return Promise.reject(new RecordNotDeliveredError(`"${record}" is not an ATTLOG line`))
    const [, userId, date, time, state, verify, workcode] = line as unknown as string[]
    try {
      this.device.punch({
        userId: userId as string,
        time: `${date}T${time}`,
        state: Number(state),
        verify: Number(verify),
        workcode: Number(workcode),
      })
    } catch (err) {
      // The log is full, or the PIN is none this record size can hold.
      return Promise.reject(new RecordNotDeliveredError((err as Error).message))
    }
    return Promise.resolve()
  }

  async close(): Promise<void> {
    this.punching = false
  }

  /** Closes every connection and both sockets. */
  async stop(): Promise<void> {
    this.punching = false
    await this.device.stop()
  }

  /**
   * `records` punches of the employees in turn, a minute apart up to a minute before the clock,
   * each employee's alternating IN, OUT (status 0, 1): a log the terminal kept before the run. They
   * are all earlier than the run's punches, so no two are the same punch to the agent.
   */
  private prefill(): void {
    const count = this.options.records
    if (count === 0) return
    const employees = this.options.employees
    const end = naiveMs(this.device.clock.now())
    this.device.fillLog(
      count,
      (i): ZkPunch => ({
        userId: employees[i % employees.length] as string,
        time: fromNaiveMs(end - (count - i) * 60_000),
        state: Math.floor(i / employees.length) % 2,
        verify: 1,
      }),
    )
  }
}
