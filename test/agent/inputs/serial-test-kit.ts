/**
 * What the serial input tests share: device settings, a SerialPortMock that remembers its ports, a
 * sink that records frames, a log kept in memory, and polling that gives up with a message.
 */
import { type Transform, Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import fc from 'fast-check'
import { type Logger, pino } from 'pino'
import { SerialPortMock, type SerialPortMockOpenOptions } from 'serialport'
import type { Transport } from '../../../agent/config/schema.js'
import { type AgentEvents, EventBus } from '../../../agent/events.js'
import type { SerialFrame } from '../../../agent/inputs/serial-frame.js'
import type { SerialSettings } from '../../../agent/inputs/serial-input.js'
import type { AcceptSummary, PunchSink } from '../../../agent/intake/punch-sink.js'

export function serialSettings(path: string, overrides: Partial<SerialSettings> = {}): SerialSettings {
  return {
    path,
    baudRate: 9600,
    dataBits: 8,
    parity: 'none',
    stopBits: 1,
    framing: { type: 'line', delimiter: '\n' },
    format: 'zk-attlog',
    ...overrides,
  }
}

/** SerialPortMock that remembers every port made from it, so a test can play the device. */
export function recordingSerialPortMock() {
  const ports: SerialPortMock[] = []
  class RecordingSerialPortMock extends SerialPortMock {
    constructor(options: SerialPortMockOpenOptions) {
      super(options)
      ports.push(this)
    }
  }
  return {
    SerialPort: RecordingSerialPortMock,
    ports,
    /** The device sends bytes on the port opened last. */
    send(bytes: string | Buffer): void {
      const binding = ports.at(-1)?.port
      if (!binding?.isOpen) throw new Error('no open mock port to send on')
      binding.emitData(Buffer.from(bytes))
    },
  }
}

/** Unplugs the adapter: the port closes as a disconnect (serialport's DisconnectedError shape). */
export function unplug(port: SerialPortMock): void {
  port.close(undefined, Object.assign(new Error('device unplugged'), { disconnected: true }))
}

export interface LogLine {
  level: number
  msg: string
  [field: string]: unknown
}

/** A pino logger whose lines are kept, parsed, for assertions. */
export function memoryLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line))
      callback()
    },
  })
  return { log: pino({ level: 'debug' }, stream), lines }
}

export const silentLog = (): Logger => pino({ level: 'silent' })

/** What a test sink answers for a frame it took: one record, stored. */
export const ONE_RECORD_STORED: AcceptSummary = { records: 1, spooled: 1, resent: 0, deadLettered: 0 }

/** Records what reaches it; `onAccept` may delay or refuse a frame. */
export class RecordingSink implements PunchSink {
  readonly frames: string[] = []
  readonly calls: string[] = []
  /** Frames the input could not delimit, as handed to rejectFrame. */
  readonly rejected: { raw: string; detail: string }[] = []
  onAccept: ((frame: string, call: number) => Promise<void> | void) | undefined

  async rejectFrame(_deviceId: string, _transport: Transport, raw: Buffer, detail: string): Promise<void> {
    this.rejected.push({ raw: raw.toString('utf8'), detail })
  }

  async accept(deviceId: string, transport: Transport, frame: Buffer): Promise<AcceptSummary> {
    if (transport !== 'serial') throw new Error(`unexpected transport ${transport} for ${deviceId}`)
    const text = frame.toString('utf8')
    this.calls.push(text)
    await this.onAccept?.(text, this.calls.length)
    this.frames.push(text)
    return ONE_RECORD_STORED
  }
}

/** An event bus, and every event of the kinds asked for, in order. */
export function recordEvents(log: Logger = silentLog()) {
  const events = new EventBus(log)
  const states: AgentEvents['deviceState'][] = []
  const malformed: AgentEvents['frameMalformed'][] = []
  events.on('deviceState', (e) => {
    states.push(e)
  })
  events.on('frameMalformed', (e) => {
    malformed.push(e)
  })
  return { events, states, malformed }
}

// Taken before any test fakes timers, so polling keeps real time.
const realSetTimeout = globalThis.setTimeout
const realNow = Date.now

/** Polls until `condition` holds; fails with `what` if it never does (no timing is asserted). */
export async function until(condition: () => boolean, what: string, giveUpMs = 15_000): Promise<void> {
  const deadline = realNow() + giveUpMs
  while (!condition()) {
    if (realNow() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => realSetTimeout(resolve, 2))
  }
}

/** A promise with its resolve, to hold a sink until the test lets go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Feeds chunks through a framer and collects what comes out. */
export async function runFramer(framer: Transform, chunks: readonly Uint8Array[]): Promise<SerialFrame[]> {
  const out: SerialFrame[] = []
  framer.on('data', (item: SerialFrame) => out.push(item))
  for (const chunk of chunks) framer.write(Buffer.from(chunk))
  framer.end()
  await finished(framer)
  return out
}

/** `bytes` cut at `cuts` (positions taken modulo its length). */
export function chunked(bytes: Uint8Array, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let start = 0
  for (const cut of [...at, bytes.length]) {
    if (cut > start) chunks.push(Buffer.from(bytes.subarray(start, cut)))
    start = Math.max(start, cut)
  }
  return chunks
}

/** Bytes rich in the ones framing cares about. */
export const framingBytes = (maxLength: number) =>
  fc
    .array(
      fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x02, 0x03, 0x23) },
        { weight: 5, arbitrary: fc.integer({ min: 0, max: 255 }) },
      ),
      { maxLength },
    )
    .map((bytes) => Uint8Array.from(bytes))
