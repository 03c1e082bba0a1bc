import { zoneOffsetMinutes } from '../../shared/time.js'
import { AdmsDevice } from './adms-device.js'
import type { AdmsDeviceOptions } from './adms-device-options.js'
import { AdmsHandshakeError } from './adms-errors.js'
import { type DeviceLink, DeviceUnreachableError, RecordNotDeliveredError } from './device-link.js'

interface AdmsDeviceLinkOptions {
  /** The agent's ADMS listener, http(s)://host:port. */
  url: string
  serialNumber: string
  /** Failures (once per outage) and recoveries, for the person watching (stderr). */
  notice: (message: string) => void
  /**
   * The IANA zone the records' wall times are written in: a notice says so when the agent's
   * TimeZone for this device is another offset, as the agent would read them wrong.
   */
  timeZone?: string
  /** Anything else of the device model (tests: timeScale, fields, contentType...). */
  device?: Partial<Omit<AdmsDeviceOptions, 'url' | 'serialNumber' | 'log'>>
}

function offsetText(minutes: number): string {
  const abs = Math.abs(minutes)
  return `UTC${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

/**
 * The simulated device as a ZKTeco/eSSL terminal pushing to the agent over ADMS (iclock): every
 * record goes into the model's attendance log and counts as delivered once the agent answered its
 * batch `OK: n`, as a terminal deletes nothing before that. A batch not acknowledged is posted
 * again after the agent's ErrorDelay until it is.
 */
export class AdmsDeviceLink implements DeviceLink {
  readonly deliveredAs = 'acknowledged'
  readonly target: string
  readonly device: AdmsDevice
  private opened = false

  constructor(private readonly options: AdmsDeviceLinkOptions) {
    this.target = `${options.url} (serial number ${options.serialNumber})`
    this.device = new AdmsDevice({
      ...options.device,
      url: options.url,
      serialNumber: options.serialNumber,
      log: options.notice,
    })
  }

  async open(): Promise<void> {
    try {
      await this.device.start({ failFast: true })
    } catch (err) {
      await this.device.stop()
      throw new DeviceUnreachableError(this.refusal(err))
    }
    this.opened = true
    const zone = this.options.timeZone
    if (zone === undefined) return
    const agents = this.device.serverOptions?.timeZoneMinutes
    const written = zoneOffsetMinutes(Date.now(), zone)
    if (agents !== undefined && written !== agents)
      this.options.notice(
        `the agent gives this device TimeZone ${offsetText(agents)}, but punches are written in ${zone} ` +
          `(${offsetText(written)}): the agent will read their times wrong; give --time-zone to match`,
      )
  }

  send(record: string): Promise<void> {
    if (!this.opened) return Promise.reject(new Error('the ADMS link is not open'))
    let acknowledged: Promise<void>
    try {
      acknowledged = this.device.addLine(record)
    } catch (err) {
      return Promise.reject(new RecordNotDeliveredError((err as Error).message))
    }
    return acknowledged.catch((err: Error) => {
      throw new RecordNotDeliveredError(err.message)
    })
  }

  async close(): Promise<void> {
    await this.device.stop()
  }

  private refusal(err: unknown): string {
    const { url, serialNumber } = this.options
    if (!(err instanceof AdmsHandshakeError)) return `cannot start the ADMS device: ${(err as Error).message}`
    if (err.status === undefined) return `cannot reach the agent's ADMS listener at ${url}: ${err.reason}`
    const body = err.body.trim().split(/\r?\n/)[0]?.slice(0, 120)
    return (
      `the agent at ${url} refused serial number ${serialNumber} (HTTP ${err.status}${body ? `: ${body}` : ''}); ` +
      'is a device with that serial number in its configuration?'
    )
  }
}
