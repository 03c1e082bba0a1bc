import type { Readable, Transform } from 'node:stream'
import type { Logger } from 'pino'
import type { DeviceConfig } from '../config/schema.js'
import type { EventBus } from '../events.js'
import type { PunchSink } from '../intake/punch-sink.js'
import { SpoolFullError } from '../spool/spool.js'
import { type SerialBackoff, serialBackoffDelay } from './serial-backoff-delay.js'
import { DEFAULT_MAX_FRAME_BYTES, type SerialFrame } from './serial-frame.js'
import { SerialLineParser } from './serial-line-parser.js'
import { StxEtxParser } from './stx-etx-parser.js'

export type SerialSettings = NonNullable<DeviceConfig['serial']>

/** What SerialInput passes when it makes a port: the device's line settings, opened by start(). */
interface SerialPortSettings {
  path: string
  baudRate: number
  dataBits: 5 | 6 | 7 | 8
  parity: 'none' | 'even' | 'odd' | 'mark' | 'space'
  stopBits: 1 | 1.5 | 2
  autoOpen: false
}

/** The part of serialport's SerialPortStream used here: `SerialPort` and `SerialPortMock` both fit. */
interface SerialPortLike extends Readable {
  readonly isOpen: boolean
  open(callback: (err: Error | null) => void): void
  close(callback?: (err: Error | null) => void): void
}

export type SerialPortConstructor = new (settings: SerialPortSettings) => SerialPortLike

export interface SerialInputOptions {
  deviceId: string
  serial: SerialSettings
  sink: PunchSink
  events: EventBus
  log: Logger
  /** serialport's `SerialPort` by default (loaded by start()); tests pass `SerialPortMock`. */
  SerialPort?: SerialPortConstructor
  /** A longer frame is malformed (default 4 KiB). */
  maxFrameBytes?: number
  /** Reopening a vanished port (default 0.5 s doubling to 30 s, jittered). */
  reopenBackoff?: SerialBackoff
  /** Retrying a frame the spool refused (default 0.25 s doubling to 5 s, jittered). */
  spoolRetryBackoff?: SerialBackoff
  /** For the jitter; Math.random by default. */
  random?: () => number
}

interface SerialInputStats {
  /** Frames the sink accepted. */
  frames: number
  /** Frames the sink failed on for a reason other than a full spool (logged with their bytes). */
  failedFrames: number
  /** Oversize, unterminated and cut-off frames. */
  malformedFrames: number
  /** Bytes outside STX..ETX. */
  noiseBytes: number
  /** Times the port was opened. */
  opens: number
}

const DEFAULT_REOPEN: SerialBackoff = { initialMs: 500, maxMs: 30_000 }
const DEFAULT_SPOOL_RETRY: SerialBackoff = { initialMs: 250, maxMs: 5_000 }

/**
 * One serial device: opens its port, frames the bytes, and hands each
 * frame to the sink, one at a time and in order. While the sink works (a slow disk), stream
 * backpressure pauses the port, so what waits in memory is bounded by the stream buffers; beyond
 * them bytes wait in the OS's tty buffer. A serial device cannot be asked to send again, so a frame
 * the spool refuses is held and retried, never dropped (docs/decisions/0027-nothing-dropped.md). When the
 * port vanishes (an unplugged USB adapter) it is reopened with backoff until stop(). Frames that
 * cannot be frames (too long, cut off) are counted and logged with the device id and their first
 * bytes in hex; they never stop the device. The constructor does no I/O
 * (docs/development/architecture.md#style).
 */
export class SerialInput {
  private readonly log: Logger
  private readonly maxFrameBytes: number
  private readonly reopenBackoff: SerialBackoff
  private readonly spoolRetryBackoff: SerialBackoff
  private readonly random: () => number
  private SerialPortClass: SerialPortConstructor | undefined
  private readonly counts: SerialInputStats = {
    frames: 0,
    failedFrames: 0,
    malformedFrames: 0,
    noiseBytes: 0,
    opens: 0,
  }

  private started = false
  private stopping = false
  private port: SerialPortLike | undefined
  /** Detaches the open port from its framer; idempotent. */
  private detachPort: ((reason: string) => void) | undefined
  private opening: Promise<void> | undefined
  private reopenTimer: NodeJS.Timeout | undefined
  private reopenAttempt = 0
  private lastOpenError: string | undefined
  /** One framer per port opening, consumed in turn so frames keep their order across reopens. */
  private readonly framers: Transform[] = []
  private wakeConsumer: (() => void) | undefined
  private consuming: Promise<void> | undefined
  private wakeSleep: (() => void) | undefined
  private spoolFullAlarm = false

  constructor(private readonly options: SerialInputOptions) {
    this.log = options.log.child({ deviceId: options.deviceId, serialPath: options.serial.path })
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
    this.reopenBackoff = options.reopenBackoff ?? DEFAULT_REOPEN
    this.spoolRetryBackoff = options.spoolRetryBackoff ?? DEFAULT_SPOOL_RETRY
    this.random = options.random ?? Math.random
    this.SerialPortClass = options.SerialPort
  }

  get deviceId(): string {
    return this.options.deviceId
  }

  stats(): SerialInputStats {
    return { ...this.counts }
  }

  /** Starts opening the port; resolves at once. A port that is not there is waited for, not an error. */
  async start(): Promise<void> {
    if (this.started) throw new Error(`serial input ${this.options.deviceId} already started`)
    this.started = true
    // Loaded here, not at import: a site with only MQTT devices runs even where serialport's native
    // bindings cannot load.
    this.SerialPortClass ??= (await import('serialport')).SerialPort
    this.consuming = this.consume()
    this.openPort()
  }

  /**
   * Stops reading, then hands the frames already read to the sink (a frame the spool still refuses
   * is logged with its bytes, the last place it exists). Closes the port and clears every timer.
   */
  async stop(): Promise<void> {
    if (!this.started || this.stopping) return
    this.stopping = true
    clearTimeout(this.reopenTimer)
    this.reopenTimer = undefined
    await this.opening
    const port = this.port
    if (port?.isOpen) {
      await new Promise<void>((resolve) =>
        port.close((err) => {
          if (err) this.log.warn({ err }, 'closing the serial port failed')
          resolve()
        }),
      )
    }
    this.detachPort?.('stopped')
    this.wakeSleep?.()
    this.wakeConsumer?.()
    await this.consuming
    this.log.info(this.counts, 'serial input stopped')
  }

  private openPort(): void {
    this.reopenTimer = undefined
    if (this.stopping) return
    const SerialPortClass = this.SerialPortClass as SerialPortConstructor
    const serial = this.options.serial
    let port: SerialPortLike
    try {
      port = new SerialPortClass({
        path: serial.path,
        baudRate: serial.baudRate,
        dataBits: serial.dataBits,
        parity: serial.parity,
        stopBits: serial.stopBits,
        autoOpen: false,
      })
    } catch (err) {
      this.openFailed(err as Error)
      return
    }
    // A port emits 'error' for failures outside open/close callbacks; unhandled, that would crash
    // the daemon. Disconnects arrive as 'close' instead.
    port.on('error', (err) => this.log.warn({ err }, 'serial port error'))
    this.opening = new Promise<void>((resolve) => {
      port.open((err) => {
        this.opening = undefined
        if (err) this.openFailed(err)
        else this.opened(port)
        resolve()
      })
    })
  }

  private opened(port: SerialPortLike): void {
    this.counts.opens++
    this.reopenAttempt = 0
    this.lastOpenError = undefined
    this.port = port
    const framer = this.createFramer()
    // end: false, because a port that closes does not end; detach() ends the framer itself.
    port.pipe(framer, { end: false })
    let attached = true
    const detach = (reason: string) => {
      if (!attached) return
      attached = false
      port.unpipe(framer)
      // Bytes read before the port went but still buffered (backpressure) are whole frames too.
      for (let chunk = port.read() as Buffer | null; chunk !== null; chunk = port.read() as Buffer | null) {
        framer.write(chunk)
      }
      // Ending the framer turns a frame cut off by the disconnect into a partial one.
      framer.end()
      if (this.port === port) {
        this.port = undefined
        this.detachPort = undefined
      }
      if (this.stopping) return
      this.log.warn({ reason }, 'serial port disconnected; reopening')
      this.options.events.emit('deviceState', {
        deviceId: this.options.deviceId,
        state: 'disconnected',
        detail: reason,
      })
      this.scheduleReopen()
    }
    this.detachPort = detach
    port.once('close', (err: Error | null | undefined) => detach(err?.message ?? 'the port closed'))
    // A read of zero bytes ends the stream without closing the port: close it to reopen.
    port.once('end', () => {
      if (port.isOpen) port.close()
      else detach('the port ended')
    })
    this.framers.push(framer)
    this.wakeConsumer?.()
    // Opened while stop() waited for the open: stop() closes it at once.
    if (this.stopping) return
    this.log.info({ baudRate: this.options.serial.baudRate }, 'serial port open')
    this.options.events.emit('deviceState', {
      deviceId: this.options.deviceId,
      state: 'connected',
      detail: this.options.serial.path,
    })
  }

  private openFailed(err: Error): void {
    const detail = describeOpenError(this.options.serial.path, err)
    if (this.stopping) return
    const retryInMs = this.scheduleReopen()
    // Once per cause: an adapter left unplugged all weekend would otherwise log every 30 s.
    if (detail !== this.lastOpenError) this.log.warn({ err, retryInMs }, `cannot open serial port: ${detail}`)
    else this.log.debug({ retryInMs }, `cannot open serial port: ${detail}`)
    this.lastOpenError = detail
    this.options.events.emit('deviceState', { deviceId: this.options.deviceId, state: 'waiting', detail })
  }

  private scheduleReopen(): number {
    const delay = serialBackoffDelay(this.reopenAttempt++, this.reopenBackoff, this.random)
    this.reopenTimer = setTimeout(() => this.openPort(), delay)
    return delay
  }

  private createFramer(): Transform {
    const framing = this.options.serial.framing
    return framing.type === 'stx-etx'
      ? new StxEtxParser({ maxFrameBytes: this.maxFrameBytes })
      : new SerialLineParser({ delimiter: framing.delimiter, maxFrameBytes: this.maxFrameBytes })
  }

  /** The one consumer: frames of every port opening, in order, one accept at a time. */
  private async consume(): Promise<void> {
    for (;;) {
      const framer = this.framers.shift()
      if (!framer) {
        if (this.stopping) return
        await new Promise<void>((resolve) => {
          this.wakeConsumer = resolve
        })
        this.wakeConsumer = undefined
        continue
      }
      try {
        for await (const item of framer as AsyncIterable<SerialFrame>) await this.handle(item)
      } catch (err) {
        this.log.error({ err }, 'serial framing failed')
      }
    }
  }

  private async handle(item: SerialFrame): Promise<void> {
    switch (item.type) {
      case 'frame':
        await this.deliver(item.bytes)
        return
      case 'noise':
        this.counts.noiseBytes += item.length
        this.log.warn({ bytes: item.length, noise: item.sample.toString('hex') }, 'noise outside STX/ETX')
        return
      case 'malformed': {
        this.counts.malformedFrames++
        const error = describeMalformed(item.reason, item.length, this.maxFrameBytes)
        // The same fields as the intake's 'malformed frame' log: device id, hex, truncated
        // (docs/decisions/0027-nothing-dropped.md).
        this.log.warn({ error, bytes: item.length, frame: item.sample.toString('hex') }, 'malformed frame')
        this.options.events.emit('frameMalformed', { deviceId: this.options.deviceId, error })
        // Kept in dead letters as well (its first bytes: the frame itself was never held whole).
        await this.options.sink
          .rejectFrame(this.options.deviceId, 'serial', item.sample, error)
          .catch((err) => {
            this.log.error({ err }, 'malformed frame not kept in dead letters')
          })
      }
    }
  }

  /** Hands one frame to the sink; holds it while the spool is full (the device cannot resend). */
  private async deliver(frame: Buffer): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.options.sink.accept(this.options.deviceId, 'serial', frame)
        this.counts.frames++
        if (this.spoolFullAlarm) {
          this.spoolFullAlarm = false
          this.log.info({ attempts: attempt + 1 }, 'spool took the held serial frame; reading again')
        }
        return
      } catch (err) {
        if (!(err instanceof SpoolFullError)) {
          // The intake dead-letters unreadable frames itself; this is a fault (a bug, an I/O error).
          // The bytes are logged in full: after this, the log is the only place they exist.
          this.counts.failedFrames++
          this.log.error({ err, frame: frame.toString('hex') }, 'serial frame not stored')
          return
        }
        if (this.stopping) {
          this.counts.failedFrames++
          this.log.error(
            { err, frame: frame.toString('hex') },
            'serial frame not stored: the spool is full at shutdown',
          )
          return
        }
        if (!this.spoolFullAlarm) {
          this.spoolFullAlarm = true
          this.log.error(
            { err },
            'spool full: holding a serial frame and pausing the port until the spool has room',
          )
        }
        await this.sleep(serialBackoffDelay(attempt, this.spoolRetryBackoff, this.random))
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping) {
        resolve()
        return
      }
      const wake = () => {
        clearTimeout(timer)
        this.wakeSleep = undefined
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.wakeSleep = wake
    })
  }
}

/** What IT staff need to hear about a port that will not open. */
function describeOpenError(path: string, err: Error): string {
  const code = (err as NodeJS.ErrnoException).code
  const message = err.message
  if (code === 'ENOENT' || /no such file|does not exist/i.test(message))
    return `${path} is not there (adapter unplugged?): ${message}`
  if (code === 'EACCES' || /permission denied/i.test(message))
    return `no permission to open ${path} (is the agent's user in the dialout group?): ${message}`
  if (code === 'EBUSY' || /busy|lock|temporarily unavailable/i.test(message))
    return `${path} is in use by another program: ${message}`
  return message
}

function describeMalformed(
  reason: 'oversize' | 'unterminated' | 'partial',
  length: number,
  max: number,
): string {
  switch (reason) {
    case 'oversize':
      return `frame of ${length} bytes is longer than ${max}`
    case 'unterminated':
      return `frame of ${length} bytes has no ETX before the next STX`
    case 'partial':
      return `frame of ${length} bytes was cut off: the port closed before its end`
  }
}
