/**
 * The ZK client against a scripted device (zk-scripted-device.ts) over TCP and UDP: the session
 * (CONNECT, AUTH with a comm key, EXIT), one request at a time matched by reply number, the bulk log
 * read whole or by chunks with the device enabled again afterwards, events acknowledged, and the
 * failures a terminal shows (refusals, silence, a dropped connection, a corrupt packet).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZkClient, type ZkClientOptions, type ZkEvent } from '../../../../agent/inputs/zk/zk-client.js'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'
import { CMD, type ScriptedDevice, type Step, startScriptedDevice } from './zk-scripted-device.js'

const SESSION = 0x45cf
const devices: ScriptedDevice[] = []
const clients: ZkClient[] = []

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)))
  await Promise.all(devices.splice(0).map((d) => d.close()))
})

const connectOk: Step = { expect: CMD.CONNECT, data: '', answer: [{ send: CMD.ACK_OK }] }
const exitOk: Step = { expect: CMD.EXIT, answer: [{ send: CMD.ACK_OK }] }
const ok = (command: number, data?: string): Step => ({
  expect: command,
  ...(data === undefined ? {} : { data }),
  answer: [{ send: CMD.ACK_OK }],
})

async function session(
  kind: 'tcp' | 'udp',
  steps: Step[],
  options: Partial<ZkClientOptions> & { split?: boolean } = {},
) {
  const { split, ...clientOptions } = options
  const device = await startScriptedDevice({ kind, session: SESSION, steps, split })
  devices.push(device)
  // A script the client strays from falls silent: the timeout then ends the test rather than vitest's.
  const client = await ZkClient.connect({
    host: '127.0.0.1',
    port: device.port,
    transport: kind,
    requestTimeoutMs: 5000,
    ...clientOptions,
  })
  clients.push(client)
  return { device, client }
}

/** GET_FREE_SIZES data: 20 u32 words, records at word 8 (ZK protocol notes). */
function freeSizes(records: number): string {
  const words = Buffer.alloc(80)
  words.writeUInt32LE(3, 4 * 4)
  words.writeUInt32LE(records, 8 * 4)
  words.writeUInt32LE(100_000, 16 * 4)
  return words.toString('hex')
}

/** The packed ZK time, from the notes' formula. */
const packed = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
  (((y % 100) * 12 * 31 + (mo - 1) * 31 + d - 1) * 86400 + (h * 60 + mi) * 60 + s) >>> 0

/** A 16-byte record: u32 PIN, u32 time, verify, state, 2 reserved, u32 work code. */
function record16(pin: number, second: number): Buffer {
  const r = Buffer.alloc(16)
  r.writeUInt32LE(pin, 0)
  r.writeUInt32LE(packed(2026, 11, 26, 9, 0, second), 4)
  r.writeUInt8(1, 8)
  r.writeUInt8(0, 9)
  return r
}

/** A 40-byte record: u16 uid, 24-byte PIN, verify @26, u32 time @27, state @31. */
function record40(uid: number, pin: string, time: number): Buffer {
  const r = Buffer.alloc(40)
  r.writeUInt16LE(uid, 0)
  r.write(pin, 2, 'latin1')
  r.writeUInt8(1, 26)
  r.writeUInt32LE(time, 27)
  r.writeUInt8(0, 31)
  return r
}

function dataset(records: Buffer[]): Buffer {
  const body = Buffer.concat(records)
  const size = Buffer.alloc(4)
  size.writeUInt32LE(body.length)
  return Buffer.concat([size, body])
}

/** `<bhii` 1, CMD_ATTLOG_RRQ, 0, 0 (the notes). */
const ATTLOG_WRRQ = `010d00${'0'.repeat(16)}`
const u32pair = (a: number, b: number) => {
  const out = Buffer.alloc(8)
  out.writeUInt32LE(a, 0)
  out.writeUInt32LE(b, 4)
  return out.toString('hex')
}

async function failure(promise: Promise<unknown>): Promise<ZkProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ZkProtocolError)
  return error as ZkProtocolError
}

describe.each(['tcp', 'udp'] as const)('ZkClient over %s', (kind) => {
  it('opens a session, reads serial number, platform, firmware and time, and exits', async () => {
    const { device, client } = await session(kind, [
      connectOk,
      {
        expect: CMD.OPTIONS_RRQ,
        data: Buffer.from('~SerialNumber\0').toString('hex'),
        answer: [{ send: CMD.ACK_OK, data: Buffer.from('~SerialNumber=CKJ1234\0') }],
      },
      {
        expect: CMD.OPTIONS_RRQ,
        data: Buffer.from('~Platform\0').toString('hex'),
        answer: [{ send: CMD.ACK_OK, data: Buffer.from('~Platform=ZEM760_TFT\0') }],
      },
      {
        expect: CMD.GET_VERSION,
        answer: [{ send: CMD.ACK_OK, data: Buffer.from('Ver 6.60 Apr 28 2017\0') }],
      },
      { expect: CMD.GET_TIME, answer: [{ send: CMD.ACK_OK, data: '6bb36823' }] },
      exitOk,
    ])
    expect(client.sessionId).toBe(SESSION)
    expect(client.transportKind).toBe(kind)
    expect(await client.readDeviceInfo()).toEqual({
      serialNumber: 'CKJ1234',
      platform: 'ZEM760_TFT',
      firmware: 'Ver 6.60 Apr 28 2017',
    })
    expect(await client.getTime()).toEqual({
      year: 2018,
      month: 6,
      day: 25,
      hour: 17,
      minute: 50,
      second: 35,
    })
    await client.close()
    await device.finished
    expect(device.problems).toEqual([])
    expect(client.isOpen).toBe(false)
  })

  it('leaves out the options a device does not have', async () => {
    const { device, client } = await session(kind, [
      connectOk,
      { expect: CMD.OPTIONS_RRQ, answer: [{ send: CMD.ACK_ERROR }] },
      {
        expect: CMD.OPTIONS_RRQ,
        answer: [{ send: CMD.ACK_OK, data: Buffer.from('~Platform=JZ4725_TFT\0') }],
      },
      { expect: CMD.GET_VERSION, answer: [{ send: 0xffff }] },
    ])
    expect(await client.readDeviceInfo()).toEqual({ platform: 'JZ4725_TFT' })
    expect(device.problems).toEqual([])
  })

  it('sets the time as the packed u32', async () => {
    const { device, client } = await session(kind, [connectOk, ok(CMD.SET_TIME, '6bb36823')])
    await client.setTime({ year: 2018, month: 6, day: 25, hour: 17, minute: 50, second: 35 })
    expect(device.problems).toEqual([])
  })

  it('authenticates with the comm key when the device asks (CMD_ACK_UNAUTH)', async () => {
    const { device, client } = await session(
      kind,
      [
        { expect: CMD.CONNECT, answer: [{ send: CMD.ACK_UNAUTH }] },
        // MakeKey(45, 0x45cf, 50) from the notes.
        ok(CMD.AUTH, '61c9323c'),
        ok(CMD.DISABLEDEVICE),
      ],
      { commKey: 45 },
    )
    await client.disableDevice()
    expect(device.problems).toEqual([])
  })

  it('fails with zk_auth_refused when the comm key is wrong', async () => {
    const device = await startScriptedDevice({
      kind,
      session: SESSION,
      steps: [
        { expect: CMD.CONNECT, answer: [{ send: CMD.ACK_UNAUTH }] },
        { expect: CMD.AUTH, data: '614d323c', answer: [{ send: CMD.ACK_UNAUTH }] },
      ],
    })
    devices.push(device)
    const closed: (ZkProtocolError | undefined)[] = []
    const error = await failure(
      ZkClient.connect({
        host: '127.0.0.1',
        port: device.port,
        transport: kind,
        commKey: 12,
        onClose: (e) => closed.push(e),
      }),
    )
    expect(error.code).toBe('zk_auth_refused')
    expect(error.replyCode).toBe(CMD.ACK_UNAUTH)
    expect(closed.map((e) => e?.code)).toEqual(['zk_auth_refused'])
    expect(device.problems).toEqual([])
  })

  it('fails with zk_session_refused when the device will not open a session', async () => {
    const device = await startScriptedDevice({
      kind,
      session: SESSION,
      steps: [{ expect: CMD.CONNECT, answer: [{ send: CMD.ACK_ERROR }] }],
    })
    devices.push(device)
    const error = await failure(ZkClient.connect({ host: '127.0.0.1', port: device.port, transport: kind }))
    expect(error.code).toBe('zk_session_refused')
  })

  it('reads a small log sent whole in CMD_DATA, disabling the device around it', async () => {
    const records = [
      record40(13, '999111333', 0x2368b36b),
      record40(14, 'A-7', packed(2026, 2, 28, 23, 59, 59)),
    ]
    const { device, client } = await session(kind, [
      connectOk,
      ok(CMD.DISABLEDEVICE),
      { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(2) }] },
      { expect: CMD.DATA_WRRQ, data: ATTLOG_WRRQ, answer: [{ send: CMD.DATA, data: dataset(records) }] },
      ok(CMD.ENABLEDEVICE),
    ])
    const read = await client.readAttendance()
    expect(read.recordBytes).toBe(40)
    expect(read.freeSizes.records).toBe(2)
    expect(read.malformed).toEqual([])
    expect(read.records).toEqual([
      {
        recordBytes: 40,
        uid: 13,
        userId: '999111333',
        verify: 1,
        state: 0,
        time: { year: 2018, month: 6, day: 25, hour: 17, minute: 50, second: 35 },
      },
      {
        recordBytes: 40,
        uid: 14,
        userId: 'A-7',
        verify: 1,
        state: 0,
        time: { year: 2026, month: 2, day: 28, hour: 23, minute: 59, second: 59 },
      },
    ])
    await device.finished
    expect(device.problems).toEqual([])
  })

  it('reads a large log by chunks, one request at a time, then frees the buffer', async () => {
    const records = Array.from({ length: 7 }, (_, i) => record16(1000 + i, i))
    const whole = dataset(records)
    // 4 + 7 * 16 = 116 bytes in chunks of 48: 48, 48, 20.
    const chunk = (start: number, size: number): Step => {
      const bytes = whole.subarray(start, start + size)
      const data =
        kind === 'tcp'
          ? [{ send: CMD.DATA, data: bytes }]
          : // UDP: the bytes in several CMD_DATA packets (the notes: ~1 KiB each; smaller here).
            [
              { send: CMD.DATA, data: bytes.subarray(0, 16) },
              { send: CMD.DATA, data: bytes.subarray(16) },
            ]
      return {
        expect: CMD.DATA_RDY,
        data: u32pair(start, size),
        answer: [{ send: CMD.PREPARE_DATA, data: u32pair(size, 0x10) }, ...data, { send: CMD.ACK_OK }],
      }
    }
    const sizeReply = Buffer.alloc(13)
    sizeReply.writeUInt32LE(whole.length, 1)
    sizeReply.writeUInt32LE(whole.length, 5)
    const { device, client } = await session(
      kind,
      [
        connectOk,
        ok(CMD.DISABLEDEVICE),
        { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(7) }] },
        { expect: CMD.DATA_WRRQ, data: ATTLOG_WRRQ, answer: [{ send: CMD.ACK_OK, data: sizeReply }] },
        chunk(0, 48),
        chunk(48, 48),
        chunk(96, 20),
        ok(CMD.FREE_DATA),
        ok(CMD.ENABLEDEVICE),
      ],
      { maxChunkBytes: 48, split: true },
    )
    const read = await client.readAttendance()
    expect(read.recordBytes).toBe(16)
    expect(read.records.map((r) => [r.userId, r.time.second, r.workcode])).toEqual(
      records.map((_, i) => [String(1000 + i), i, 0]),
    )
    await device.finished
    expect(device.problems).toEqual([])
  })

  it('enables the device again when the read fails, and reports why', async () => {
    const { device, client } = await session(kind, [
      connectOk,
      ok(CMD.DISABLEDEVICE),
      { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(3) }] },
      // 2 records' worth of bytes for 3 counted: no record size fits.
      {
        expect: CMD.DATA_WRRQ,
        answer: [{ send: CMD.DATA, data: dataset([record16(1, 1), record16(2, 2)]) }],
      },
      ok(CMD.ENABLEDEVICE),
      ok(CMD.DISABLEDEVICE),
      { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(3) }] },
      { expect: CMD.DATA_WRRQ, answer: [{ send: CMD.ACK_ERROR }] },
      ok(CMD.ENABLEDEVICE),
    ])
    expect((await failure(client.readAttendance())).code).toBe('zk_bad_dataset')
    const refused = await failure(client.readAttendance())
    expect(refused.code).toBe('zk_command_failed')
    expect(refused.replyCode).toBe(CMD.ACK_ERROR)
    await device.finished
    expect(device.problems).toEqual([])
    expect(client.isOpen).toBe(true)
  })

  it('refuses a dataset over the bound before reading it, and frees the buffer', async () => {
    const sizeReply = Buffer.alloc(13)
    sizeReply.writeUInt32LE(1_000_000, 1)
    const { device, client } = await session(
      kind,
      [
        connectOk,
        ok(CMD.DISABLEDEVICE),
        { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(25_000) }] },
        { expect: CMD.DATA_WRRQ, answer: [{ send: CMD.ACK_OK, data: sizeReply }] },
        ok(CMD.FREE_DATA),
        ok(CMD.ENABLEDEVICE),
      ],
      { maxDatasetBytes: 64 * 1024 },
    )
    expect((await failure(client.readAttendance())).code).toBe('zk_dataset_too_large')
    await device.finished
    expect(device.problems).toEqual([])
  })

  it('acknowledges each event with its own reply number and reports it', async () => {
    const events: ZkEvent[] = []
    const { device, client } = await session(
      kind,
      [
        connectOk,
        {
          expect: CMD.REG_EVENT,
          data: '01000000',
          answer: [
            { send: CMD.ACK_OK },
            // The notes' vectors: a 12-byte u32-PIN event and a 32-byte text-PIN event.
            { event: 1, data: 'f19449000000120c07130906' },
          ],
        },
        {
          expect: CMD.ACK_OK,
          reply: 0,
          data: '',
          answer: [
            { event: 1, data: `${Buffer.from('1140064').toString('hex').padEnd(48, '0')}0f00120b1d0c3703` },
          ],
        },
        { expect: CMD.ACK_OK, reply: 0, answer: [{ event: 2, data: '' }] },
        { expect: CMD.ACK_OK, reply: 0, answer: [{ event: 1, data: '0102' }] },
        { expect: CMD.ACK_OK, reply: 0, answer: [] },
      ],
      { onEvent: (e) => events.push(e) },
    )
    await client.registerEvents()
    await device.finished
    expect(events).toEqual([
      {
        type: 'attlog',
        attlog: {
          userId: '4822257',
          verify: 0,
          state: 0,
          time: { year: 2018, month: 12, day: 7, hour: 19, minute: 9, second: 6 },
        },
      },
      {
        type: 'attlog',
        attlog: {
          userId: '1140064',
          verify: 15,
          state: 0,
          time: { year: 2018, month: 11, day: 29, hour: 12, minute: 55, second: 3 },
        },
      },
      { type: 'other', eventCode: 2, data: Buffer.alloc(0) },
      { type: 'malformed', eventCode: 1, data: '0102', error: expect.stringContaining('EF_ATTLOG') },
    ])
    expect(device.problems).toEqual([])
  })

  it('ignores a reply with another reply number and waits for its own', async () => {
    const { device, client } = await session(kind, [
      connectOk,
      {
        expect: CMD.GET_TIME,
        answer: [
          { send: CMD.ACK_OK, reply: 77, data: '00000000' },
          { send: CMD.ACK_OK, data: '6bb36823' },
        ],
      },
    ])
    expect((await client.getTime()).year).toBe(2018)
    expect(device.problems).toEqual([])
  })

  it('sends one request at a time, in the order they were made', async () => {
    const { device, client } = await session(kind, [
      connectOk,
      { expect: CMD.GET_TIME, answer: [{ send: CMD.ACK_OK, data: '6bb36823' }] },
      { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(5) }] },
      ok(CMD.ENABLEDEVICE),
    ])
    const [time, sizes] = await Promise.all([client.getTime(), client.readFreeSizes(), client.enableDevice()])
    expect(time.second).toBe(35)
    expect(sizes.records).toBe(5)
    expect(device.received.map((p) => p.reply)).toEqual([0, 1, 2, 3])
    expect(device.problems).toEqual([])
  })

  it('ends the session with zk_timeout when the device falls silent', async () => {
    const closed: (ZkProtocolError | undefined)[] = []
    const { client } = await session(kind, [connectOk, { expect: CMD.GET_TIME, answer: [] }], {
      requestTimeoutMs: 200,
      onClose: (e) => closed.push(e),
    })
    const error = await failure(client.getTime())
    expect(error.code).toBe('zk_timeout')
    expect(client.isOpen).toBe(false)
    expect(closed.map((e) => e?.code)).toEqual(['zk_timeout'])
    expect((await failure(client.getTime())).code).toBe('zk_timeout')
  })

  it('ends the session with zk_bad_checksum on a corrupt packet', async () => {
    const { client } = await session(kind, [
      connectOk,
      { expect: CMD.GET_TIME, answer: [{ send: CMD.ACK_OK, data: '6bb36823', badChecksum: true }] },
    ])
    expect((await failure(client.getTime())).code).toBe('zk_bad_checksum')
    expect(client.isOpen).toBe(false)
  })

  it('sends CMD_CLEAR_ATTLOG only when asked by name', async () => {
    const { device, client } = await session(kind, [connectOk, ok(CMD.CLEAR_ATTLOG)])
    await client.clearAttendanceLog()
    expect(device.received.map((p) => p.command)).toEqual([CMD.CONNECT, CMD.CLEAR_ATTLOG])
    expect(device.problems).toEqual([])
  })
})

describe('ZkClient, one transport', () => {
  it('fails the read with zk_connection_closed when the connection drops mid-chunk', async () => {
    const sizeReply = Buffer.alloc(13)
    sizeReply.writeUInt32LE(4 + 16 * 4, 1)
    const closed: (ZkProtocolError | undefined)[] = []
    const { device, client } = await session(
      'tcp',
      [
        connectOk,
        ok(CMD.DISABLEDEVICE),
        { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(4) }] },
        { expect: CMD.DATA_WRRQ, answer: [{ send: CMD.ACK_OK, data: sizeReply }] },
        {
          expect: CMD.DATA_RDY,
          answer: [
            { send: CMD.PREPARE_DATA, data: u32pair(68, 0x10) },
            { cutAfter: 30, send: CMD.DATA, data: Buffer.alloc(68) },
          ],
        },
      ],
      { onClose: (e) => closed.push(e) },
    )
    const error = await failure(client.readAttendance())
    expect(error.code).toBe('zk_connection_closed')
    expect(error.message).toContain('middle of a packet')
    expect(closed.map((e) => e?.code)).toEqual(['zk_connection_closed'])
    await device.finished
    expect(device.problems).toEqual([])
  })

  it('fails the read with zk_timeout when a UDP device falls silent mid-chunk', async () => {
    const sizeReply = Buffer.alloc(13)
    sizeReply.writeUInt32LE(4 + 16 * 4, 1)
    const { device, client } = await session(
      'udp',
      [
        connectOk,
        ok(CMD.DISABLEDEVICE),
        { expect: CMD.GET_FREE_SIZES, answer: [{ send: CMD.ACK_OK, data: freeSizes(4) }] },
        { expect: CMD.DATA_WRRQ, answer: [{ send: CMD.ACK_OK, data: sizeReply }] },
        {
          expect: CMD.DATA_RDY,
          answer: [
            { send: CMD.PREPARE_DATA, data: u32pair(68, 0x10) },
            { send: CMD.DATA, data: Buffer.alloc(30) },
            { drop: true },
          ],
        },
      ],
      { requestTimeoutMs: 200 },
    )
    expect((await failure(client.readAttendance())).code).toBe('zk_timeout')
    expect(client.isOpen).toBe(false)
    expect(device.problems).toEqual([])
  })

  it('fails with zk_session_refused when the device closes the connection at CMD_CONNECT', async () => {
    const device = await startScriptedDevice({
      kind: 'tcp',
      session: SESSION,
      steps: [{ expect: CMD.CONNECT, answer: [{ drop: true }] }],
    })
    devices.push(device)
    const error = await failure(ZkClient.connect({ host: '127.0.0.1', port: device.port, transport: 'tcp' }))
    expect(error.code).toBe('zk_session_refused')
  })

  it('falls back to UDP in auto mode when no TCP connection can be opened', async () => {
    // The scripted UDP device's port has no TCP listener, so the TCP connection is refused.
    const { device, client } = await session('udp', [connectOk, ok(CMD.ENABLEDEVICE)], { transport: 'auto' })
    expect(client.transportKind).toBe('udp')
    await client.enableDevice()
    expect(device.problems).toEqual([])
  })

  it('refuses bounds that are not positive integers', async () => {
    await expect(ZkClient.connect({ host: '127.0.0.1', maxChunkBytes: 0 })).rejects.toThrow(RangeError)
    await expect(ZkClient.connect({ host: '127.0.0.1', requestTimeoutMs: -1 })).rejects.toThrow(RangeError)
  })

  it('fails with zk_unreachable when nothing listens', async () => {
    const device = await startScriptedDevice({ kind: 'tcp', session: SESSION, steps: [] })
    const port = device.port
    await device.close()
    const error = await failure(ZkClient.connect({ host: '127.0.0.1', port, transport: 'tcp' }))
    expect(error.code).toBe('zk_unreachable')
  })
})
