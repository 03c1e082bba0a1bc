import { type DeviceLink, DeviceUnreachableError, RecordNotDeliveredError } from './device-link.js'

/** The part of serialport's SerialPort used here (`SerialPortMock` fits too). */
interface WritableSerialPort {
  readonly isOpen: boolean
  open(callback: (err: Error | null) => void): void
  write(data: string, callback: (err: Error | null | undefined) => void): boolean
  drain(callback: (err: Error | null) => void): void
  close(callback?: (err: Error | null) => void): void
  on(event: 'close', listener: (err?: Error & { disconnected?: boolean }) => void): this
  on(event: 'error', listener: (err: Error) => void): this
}

type WritableSerialPortConstructor = new (settings: {
  path: string
  baudRate: number
  dataBits: 8
  parity: 'none'
  stopBits: 1
  autoOpen: false
}) => WritableSerialPort

interface SerialDeviceLinkOptions {
  /** A real port (/dev/ttyUSB0, COM3) or one end of a pseudo-terminal pair. */
  path: string
  baudRate: number
  /** serialport's SerialPort by default (loaded by open()); tests may pass SerialPortMock. */
  SerialPort?: WritableSerialPortConstructor
}

/** The longest close() waits for the OS to send what it holds. */
const DRAIN_LIMIT_MS = 10_000

/**
 * The simulated device as a serial terminal: one record per line ("\n"), 8N1 at the given baud
 * rate. A record is delivered once serialport has handed it to the operating system; close() waits
 * for the OS to send what it holds (tcdrain) before closing, so the last punches are not cut off.
 */
export class SerialDeviceLink implements DeviceLink {
  readonly deliveredAs = 'written'
  readonly target: string
  private port: WritableSerialPort | undefined
  /** Why the port can no longer be written (it vanished, or close() was called). */
  private gone: string | undefined
  /** Rejects the writes not yet called back, for close() to settle them all. */
  private readonly waiting = new Set<(err: Error) => void>()

  constructor(private readonly options: SerialDeviceLinkOptions) {
    this.target = options.path
  }

  async open(): Promise<void> {
    // Loaded here: serialport's native bindings are needed only by a device that is serial.
    const SerialPort =
      this.options.SerialPort ??
      ((await import('serialport')).SerialPort as unknown as WritableSerialPortConstructor)
    const port = new SerialPort({
      path: this.options.path,
      baudRate: this.options.baudRate,
      dataBits: 8,
      parity: 'none',
      stopBits: 1,
      autoOpen: false,
    })
    try {
      await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())))
    } catch (err) {
      throw new DeviceUnreachableError(
        `cannot open the serial port ${this.options.path}: ${(err as Error).message.replace(/^Error: /, '')}`,
      )
    }
    port.on('error', () => {})
    port.on('close', (err) => {
      this.gone ??= `the serial port ${this.target} ${err?.disconnected ? 'was disconnected' : 'closed'}`
    })
    this.port = port
  }

  send(record: string): Promise<void> {
    const port = this.port
    if (!port) return Promise.reject(new Error('the serial port is not open'))
    if (this.gone) return Promise.reject(new RecordNotDeliveredError(this.gone))
    return new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => {
        this.waiting.delete(fail)
        reject(err)
      }
      this.waiting.add(fail)
      // Backpressure needs no wait here: the caller keeps a bounded number of records in flight.
      port.write(`${record}\n`, (err) => {
        if (!this.waiting.has(fail)) return
        if (err)
          fail(
            new RecordNotDeliveredError(
              this.gone ?? `cannot write to the serial port ${this.target}: ${err.message}`,
            ),
          )
        else {
          this.waiting.delete(fail)
          resolve()
        }
      })
    })
  }

  async close(): Promise<void> {
    const port = this.port
    if (port && !this.gone && port.isOpen) await this.drainAndClose(port)
    this.gone ??= `the serial port ${this.target} was closed`
    for (const fail of [...this.waiting])
      fail(new RecordNotDeliveredError(`${this.gone} before it was written`))
  }

  private async drainAndClose(port: WritableSerialPort): Promise<void> {
    this.gone = `the serial port ${this.target} was closed`
    // Bounded: a pseudo-terminal nobody reads never drains, and the run is over either way.
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DRAIN_LIMIT_MS)
      port.drain(() => resolve())
    })
    clearTimeout(timer)
    await new Promise<void>((resolve) => port.close(() => resolve()))
  }
}
