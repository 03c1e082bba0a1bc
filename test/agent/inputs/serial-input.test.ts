/**
 * SerialInput through @serialport/binding-mock (docs/decisions/0031-real-components-in-tests.md:
 * SerialPortMock from `serialport`, so the binding instance is shared). Line and STX/ETX framing, a malformed
 * frame counted and logged with the device id and hex, reopening with backoff when the port
 * disappears, and nothing dropped (docs/decisions/0027-nothing-dropped.md): a full spool holds the frame, it
 * is not lost.
 */
import { SerialPortMock } from 'serialport'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  SerialInput,
  type SerialInputOptions,
  type SerialSettings,
} from '../../../agent/inputs/serial-input.js'
import { SpoolFullError } from '../../../agent/spool/spool.js'
import {
  gate,
  memoryLog,
  RecordingSink,
  recordEvents,
  recordingSerialPortMock,
  serialSettings,
  silentLog,
  unplug,
  until,
} from './serial-test-kit.js'

const attlog = (pin: number, minute = 0) =>
  `${pin}\t2026-11-21 09:${String(minute % 60).padStart(2, '0')}:00\t${pin % 2}\t1\t0`

let portNumber = 0
const inputs: SerialInput[] = []

afterEach(async () => {
  await Promise.all(inputs.splice(0).map((input) => input.stop()))
  vi.useRealTimers()
  SerialPortMock.binding.reset()
})

function setUp(
  options: { serial?: Partial<SerialSettings>; input?: Partial<SerialInputOptions>; plugged?: boolean } = {},
) {
  const path = `/dev/ttyMOCK${++portNumber}`
  if (options.plugged !== false) SerialPortMock.binding.createPort(path, { echo: false, record: true })
  const mock = recordingSerialPortMock()
  const sink = new RecordingSink()
  const recorded = recordEvents()
  const { log, lines } = memoryLog()
  const input = new SerialInput({
    deviceId: 'main-door',
    serial: serialSettings(path, options.serial),
    sink,
    events: recorded.events,
    log,
    SerialPort: mock.SerialPort,
    reopenBackoff: { initialMs: 1, maxMs: 4 },
    spoolRetryBackoff: { initialMs: 1, maxMs: 4 },
    ...options.input,
  })
  inputs.push(input)
  const count = (state: string) => recorded.states.filter((s) => s.state === state).length
  return {
    path,
    mock,
    sink,
    input,
    lines,
    ...recorded,
    count,
    async started(): Promise<void> {
      await input.start()
      await until(() => count('connected') === 1, 'the port to open')
    },
  }
}

describe('line framing', () => {
  it('delivers frames split across chunks and several in one chunk, CR-LF stripped, blank lines skipped', async () => {
    const t = setUp()
    await t.started()
    t.mock.send(`${attlog(1)}\r\n${attlog(2).slice(0, 7)}`)
    await until(() => t.sink.frames.length === 1, 'the first frame')
    t.mock.send(`${attlog(2).slice(7)}\r\n\r\n\n${attlog(3)}\n${attlog(4)}\r\n`)
    await until(() => t.sink.frames.length === 4, 'four frames')
    expect(t.sink.frames).toEqual([attlog(1), attlog(2), attlog(3), attlog(4)])
    expect(t.malformed).toEqual([])
    expect(t.input.stats()).toMatchObject({ frames: 4, malformedFrames: 0, failedFrames: 0, opens: 1 })
  })

  it('uses the configured delimiter', async () => {
    const t = setUp({ serial: { framing: { type: 'line', delimiter: ';' }, format: 'csv' } })
    await t.started()
    t.mock.send('E1,2026-11-21 09:00:00,IN;E2,2026-11-21 09:01:00,OUT;E3')
    await until(() => t.sink.frames.length === 2, 'two frames')
    t.mock.send(',2026-11-21 09:02:00,IN;')
    await until(() => t.sink.frames.length === 3, 'three frames')
    expect(t.sink.frames).toEqual([
      'E1,2026-11-21 09:00:00,IN',
      'E2,2026-11-21 09:01:00,OUT',
      'E3,2026-11-21 09:02:00,IN',
    ])
  })

  it('counts and logs an oversize line with the device id and hex, and carries on', async () => {
    const t = setUp()
    await t.started()
    t.mock.send(`${'X'.repeat(10_000)}\n${attlog(7)}\n`)
    await until(() => t.sink.frames.length === 1, 'the frame after the oversize one')
    expect(t.sink.frames).toEqual([attlog(7)])
    expect(t.malformed).toEqual([
      { deviceId: 'main-door', error: 'frame of 10000 bytes is longer than 4096' },
    ])
    const logged = t.lines.find((l) => l.msg === 'malformed frame')
    expect(logged).toMatchObject({
      deviceId: 'main-door',
      bytes: 10_000,
      frame: Buffer.from('X'.repeat(64)).toString('hex'),
    })
    expect(t.input.stats()).toMatchObject({ frames: 1, malformedFrames: 1 })
    // Nothing a device sent is only in a log: its first bytes go to dead letters too.
    expect(t.sink.rejected).toEqual([
      { raw: 'X'.repeat(64), detail: 'frame of 10000 bytes is longer than 4096' },
    ])
  })
})

describe('STX/ETX framing', () => {
  it('delivers what is between STX and ETX, counts noise, and reports an unterminated frame', async () => {
    const t = setUp({ serial: { framing: { type: 'stx-etx' } } })
    await t.started()
    t.mock.send(`\x02${attlog(1)}\x03\r\nnoise\x02${attlog(2).slice(0, 9)}`)
    await until(() => t.sink.frames.length === 1, 'the first frame')
    t.mock.send(`${attlog(2).slice(9)}\x03\x02cut short\x02${attlog(3)}\x03`)
    await until(() => t.sink.frames.length === 3, 'three frames')
    expect(t.sink.frames).toEqual([attlog(1), attlog(2), attlog(3)])
    expect(t.malformed).toEqual([
      { deviceId: 'main-door', error: 'frame of 9 bytes has no ETX before the next STX' },
    ])
    expect(t.input.stats()).toMatchObject({ frames: 3, malformedFrames: 1, noiseBytes: 7 })
    expect(t.lines.find((l) => l.msg === 'noise outside STX/ETX')).toMatchObject({
      deviceId: 'main-door',
      bytes: 7,
      noise: Buffer.from('\r\nnoise').toString('hex'),
    })
  })

  it('drops an oversize frame as malformed and reads the next one', async () => {
    const t = setUp({ serial: { framing: { type: 'stx-etx' } }, input: { maxFrameBytes: 100 } })
    await t.started()
    t.mock.send(`\x02${'Y'.repeat(5000)}\x03\x02${attlog(4)}\x03`)
    await until(() => t.sink.frames.length === 1, 'the frame after the oversize one')
    expect(t.sink.frames).toEqual([attlog(4)])
    expect(t.malformed).toEqual([{ deviceId: 'main-door', error: 'frame of 5000 bytes is longer than 100' }])
  })
})

describe('delivery', () => {
  it('hands frames over one at a time and in order; a slow sink pauses the port', async () => {
    const t = setUp()
    const held = gate()
    let inFlight = 0
    let mostInFlight = 0
    t.sink.onAccept = async (_frame, call) => {
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      if (call === 1) await held.promise
      inFlight--
    }
    await t.started()
    const lines = Array.from({ length: 3000 }, (_, i) => attlog(i, i))
    t.mock.send(`${lines.join('\n')}\n`)
    const port = t.mock.ports[0] as SerialPortMock
    await until(() => port.isPaused(), 'backpressure to pause the port')
    expect(t.sink.calls).toHaveLength(1)
    held.open()
    await until(() => t.sink.frames.length === lines.length, 'every frame')
    expect(t.sink.frames).toEqual(lines)
    expect(mostInFlight).toBe(1)
  })

  it('holds a frame the spool refuses and retries it until it is stored, alarming once', async () => {
    const t = setUp()
    let refusals = 0
    t.sink.onAccept = (frame) => {
      if (frame === attlog(1) && refusals < 5) {
        refusals++
        throw new SpoolFullError('cap')
      }
    }
    await t.started()
    t.mock.send(`${attlog(1)}\n${attlog(2)}\n${attlog(3)}\n`)
    await until(() => t.sink.frames.length === 3, 'three frames')
    expect(t.sink.frames).toEqual([attlog(1), attlog(2), attlog(3)])
    expect(t.sink.calls.filter((c) => c === attlog(1))).toHaveLength(6)
    expect(t.lines.filter((l) => l.level === 50 && String(l.msg).startsWith('spool full'))).toHaveLength(1)
    expect(t.lines.filter((l) => l.msg === 'spool took the held serial frame; reading again')).toHaveLength(1)
    expect(t.input.stats()).toMatchObject({ frames: 3, failedFrames: 0 })
  })

  it('logs a frame the sink fails on with its bytes and goes on with the next', async () => {
    const t = setUp()
    t.sink.onAccept = (frame) => {
      if (frame === attlog(1)) throw new Error('EIO: the disk said no')
    }
    await t.started()
    t.mock.send(`${attlog(1)}\n${attlog(2)}\n`)
    await until(() => t.sink.frames.length === 1, 'the next frame')
    expect(t.sink.frames).toEqual([attlog(2)])
    expect(t.lines.find((l) => l.msg === 'serial frame not stored')).toMatchObject({
      deviceId: 'main-door',
      frame: Buffer.from(attlog(1)).toString('hex'),
    })
    expect(t.input.stats()).toMatchObject({ frames: 1, failedFrames: 1 })
  })

  it('passes the line settings to the port', async () => {
    const t = setUp({ serial: { baudRate: 19_200, dataBits: 7, parity: 'even', stopBits: 2 } })
    await t.started()
    expect(t.mock.ports[0]?.port?.openOptions).toMatchObject({
      path: t.path,
      baudRate: 19_200,
      dataBits: 7,
      parity: 'even',
      stopBits: 2,
    })
  })
})

describe('a port that disappears', () => {
  it('reports it, reopens with backoff, and delivers frames from before and after; a cut-off frame is malformed', async () => {
    const t = setUp()
    await t.started()
    t.mock.send(`${attlog(1)}\nPARTIAL`)
    await until(() => t.sink.frames.length === 1, 'the frame before the unplug')
    const first = t.mock.ports[0] as SerialPortMock
    // The bytes have left the binding, so they are in the framer when the port goes.
    await until(() => first.port?.port.data.length === 0, 'the partial frame to be read')
    // The adapter is gone from the system (the mock forgets the path), then the port closes.
    SerialPortMock.binding.reset()
    unplug(first)
    await until(() => t.count('waiting') >= 2, 'failed reopens')
    SerialPortMock.binding.createPort(t.path, { echo: false, record: true })
    await until(() => t.count('connected') === 2, 'the port to reopen')
    t.mock.send(`${attlog(2)}\n`)
    await until(() => t.sink.frames.length === 2, 'the frame after the reopen')

    expect(t.sink.frames).toEqual([attlog(1), attlog(2)])
    expect(t.malformed).toEqual([
      { deviceId: 'main-door', error: 'frame of 7 bytes was cut off: the port closed before its end' },
    ])
    const states = t.states.map((s) => s.state)
    const waiting = states.length - 3
    expect(states).toEqual(['connected', 'disconnected', ...Array(waiting).fill('waiting'), 'connected'])
    expect(t.states[1]).toEqual({ deviceId: 'main-door', state: 'disconnected', detail: 'device unplugged' })
    expect(t.states[2]?.detail).toMatch(/is not there \(adapter unplugged\?\)/)
    // One warning for the cause, not one per attempt.
    expect(
      t.lines.filter((l) => String(l.msg).startsWith('cannot open serial port') && l.level === 40),
    ).toHaveLength(1)
    expect(t.input.stats().opens).toBe(2)
  })

  it('delivers the frames read before the unplug that were still waiting behind a slow sink', async () => {
    const t = setUp()
    const held = gate()
    t.sink.onAccept = (_frame, call) => (call === 1 ? held.promise : undefined)
    await t.started()
    const lines = Array.from({ length: 1500 }, (_, i) => attlog(i, i))
    t.mock.send(`${lines.join('\n')}\n`)
    const port = t.mock.ports[0] as SerialPortMock
    await until(
      () => port.isPaused() && port.readableLength > 0 && port.port?.port.data.length === 0,
      'bytes read but held in the port by backpressure',
    )
    SerialPortMock.binding.reset()
    unplug(port)
    await until(() => t.count('disconnected') === 1, 'the disconnect')
    held.open()
    await until(() => t.sink.frames.length === lines.length, 'every frame read before the unplug')
    expect(t.sink.frames).toEqual(lines)
    expect(t.malformed).toEqual([])
  })

  it('waits for a port that is not there at start', async () => {
    const t = setUp({ plugged: false })
    await t.input.start()
    await until(() => t.count('waiting') >= 2, 'failed opens')
    SerialPortMock.binding.createPort(t.path, { echo: false, record: true })
    await until(() => t.count('connected') === 1, 'the port to open')
    t.mock.send(`${attlog(5)}\n`)
    await until(() => t.sink.frames.length === 1, 'a frame')
    expect(t.sink.frames).toEqual([attlog(5)])
  })

  it.each([
    ['ENOENT', 'No such file or directory, cannot open /dev/ttyUSB0', /is not there \(adapter unplugged\?\)/],
    ['EACCES', 'Permission denied, cannot open /dev/ttyUSB0', /no permission .* dialout group/],
    ['EBUSY', 'Resource temporarily unavailable Cannot lock port', /is in use by another program/],
  ])('says why a port cannot be opened (%s) and keeps trying', async (code, message, detail) => {
    const t = setUp()
    class RefusingPort extends SerialPortMock {
      override open(callback?: (err: Error | null) => void): void {
        process.nextTick(() => callback?.(Object.assign(new Error(message), { code })))
      }
    }
    const input = new SerialInput({
      deviceId: 'main-door',
      serial: serialSettings(t.path),
      sink: t.sink,
      events: t.events,
      log: silentLog(),
      SerialPort: RefusingPort,
      reopenBackoff: { initialMs: 1, maxMs: 2 },
    })
    inputs.push(input)
    await input.start()
    await until(() => t.count('waiting') >= 3, 'repeated attempts')
    expect(t.states[0]?.detail).toMatch(detail)
    expect(t.states[0]?.detail).toContain(message)
  })

  it('backs off from 0.5 s doubling to 30 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const t = setUp({
      plugged: false,
      input: { reopenBackoff: { initialMs: 500, maxMs: 30_000 }, random: () => 1 },
    })
    await t.input.start()
    await until(() => t.count('waiting') === 1, 'the first failed open')
    const delays = [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]
    for (const [i, delay] of delays.entries()) {
      expect(vi.getTimerCount()).toBe(1)
      await vi.advanceTimersByTimeAsync(delay - 1)
      expect(t.mock.ports).toHaveLength(i + 1)
      await vi.advanceTimersByTimeAsync(1)
      expect(t.mock.ports).toHaveLength(i + 2)
      await until(() => t.count('waiting') === i + 2, `failed open ${i + 2}`)
    }
    await t.input.stop()
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('stop()', () => {
  it('closes the port and leaves no timer while a reopen is pending', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const t = setUp()
    await t.started()
    unplug(t.mock.ports[0] as SerialPortMock)
    await until(() => t.count('disconnected') === 1, 'the disconnect')
    expect(vi.getTimerCount()).toBe(1)
    await t.input.stop()
    expect(vi.getTimerCount()).toBe(0)
    expect(t.mock.ports.every((p) => !p.isOpen)).toBe(true)
  })

  it('hands over the frames already read, closes the port, and leaves no timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const t = setUp()
    const held = gate()
    t.sink.onAccept = (_frame, call) => (call === 1 ? held.promise : undefined)
    await t.started()
    const lines = Array.from({ length: 50 }, (_, i) => attlog(i, i))
    t.mock.send(`${lines.join('\n')}\nPARTIAL`)
    const port = t.mock.ports[0] as SerialPortMock
    await until(() => t.sink.calls.length === 1 && port.port?.port.data.length === 0, 'the bytes to be read')
    const stopped = t.input.stop()
    held.open()
    await stopped
    expect(t.sink.frames).toEqual(lines)
    expect(t.malformed.map((m) => m.error)).toEqual([
      'frame of 7 bytes was cut off: the port closed before its end',
    ])
    expect(port.isOpen).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('logs a frame the spool still refuses at shutdown with its bytes, and leaves no timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const t = setUp({ input: { spoolRetryBackoff: { initialMs: 60_000, maxMs: 60_000 } } })
    t.sink.onAccept = () => {
      throw new SpoolFullError('disk')
    }
    await t.started()
    t.mock.send(`${attlog(9)}\n`)
    await until(() => t.sink.calls.length === 1 && vi.getTimerCount() === 1, 'the retry to be scheduled')
    await t.input.stop()
    expect(vi.getTimerCount()).toBe(0)
    expect(t.sink.calls).toEqual([attlog(9), attlog(9)])
    expect(
      t.lines.find((l) => l.msg === 'serial frame not stored: the spool is full at shutdown'),
    ).toMatchObject({
      deviceId: 'main-door',
      frame: Buffer.from(attlog(9)).toString('hex'),
    })
  })
})
