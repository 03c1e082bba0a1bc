/**
 * The agent's ZK client against the terminal emulator: two implementations of the protocol written
 * apart, from the research notes, so a misreading shows as a disagreement here
 * (docs/development/zk-protocol.md). Every record size read back as put in, TCP and UDP (and auto
 * falling back to UDP), a comm key, real-time events in every form, the user table of 72 and 28
 * bytes, a log of 100,000 records read in chunks, a connection dropped mid-read, split and merged
 * TCP replies, and a second session refused.
 */
import { createSocket, type RemoteInfo } from 'node:dgram'
import { afterEach, describe, expect, it } from 'vitest'
import { ZkClient, type ZkClientOptions, type ZkEvent } from '../../../../agent/inputs/zk/zk-client.js'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'
import type { ZkAttendanceRecord } from '../../../../agent/inputs/zk/zk-records.js'
import { formatZkWallTime } from '../../../../agent/inputs/zk/zk-time.js'
import type { ZkUser } from '../../../../agent/inputs/zk/zk-users.js'
import type { ZkEventSize } from '../../../../agent/simulator/zk-device/zk-attlog-event.js'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'
import type { ZkDeviceOptions, ZkPunch } from '../../../../agent/simulator/zk-device/zk-device-options.js'

type RecordSize = 40 | 16 | 8
const TRANSPORTS = ['tcp', 'udp'] as const
const RECORD_SIZES = [40, 16, 8] as const

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function startDevice(options: ZkDeviceOptions) {
  const device = new ZkDevice({ time: '2026-11-26T09:00:00', serialNumber: 'CEXF212360012', ...options })
  const port = await device.start()
  cleanups.push(() => device.stop())
  return { device, port }
}

async function connect(
  port: number,
  transport: ZkClientOptions['transport'],
  options: Partial<ZkClientOptions> = {},
) {
  const client = await ZkClient.connect({ host: '127.0.0.1', port, transport, ...options })
  cleanups.push(() => client.close())
  return client
}

async function failure(promise: Promise<unknown>): Promise<ZkProtocolError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ZkProtocolError)
    return error as ZkProtocolError
  }
  throw new Error('expected the promise to fail')
}

/**
 * PINs each record size can hold: numeric on 16- and 8-byte terminals (a u32 in the record or the
 * 28-byte user entry), text up to 24 characters on 40-byte ones.
 */
function pinOf(recordSize: RecordSize, i: number): string {
  if (recordSize !== 40) return String(1000 + i)
  return i % 3 === 0
    ? `E${String(i).padStart(4, '0')}`
    : i % 3 === 1
      ? String(4_822_257 + i)
      : `SITE-${i}`.padEnd(24, 'x')
}

/** Punches of `users` people, a minute apart from 2025-01-01, with every field varied. */
function makePunches(recordSize: RecordSize, count: number, users: number): ZkPunch[] {
  const start = Date.UTC(2025, 0, 1)
  return Array.from({ length: count }, (_, i) => ({
    userId: pinOf(recordSize, i % users),
    time: new Date(start + i * 60_000 + (i % 60) * 1000).toISOString().slice(0, 19),
    state: i % 6,
    verify: [0, 1, 2, 15][i % 4] as number,
    workcode: recordSize === 16 ? i % 7 : 0,
  }))
}

/** What a punch must read back as: only the fields the record size carries. */
function punchKey(recordSize: RecordSize, punch: ZkPunch): string {
  return [punch.userId, punch.time, punch.verify, punch.state, recordSize === 16 ? punch.workcode : ''].join(
    '|',
  )
}

/** A record read, its uid mapped to a PIN through the user table when it carries no PIN (8 bytes). */
function recordKey(record: ZkAttendanceRecord, pinOfUid: Map<number, string>): string {
  const pin = record.userId ?? pinOfUid.get(record.uid as number) ?? `uid ${record.uid}`
  return [
    pin,
    formatZkWallTime(record.time),
    record.verify,
    record.state,
    record.recordBytes === 16 ? record.workcode : '',
  ].join('|')
}

/** Compares two long lists by their first difference, so a failure shows one record, not 100,000. */
function expectSameKeys(actual: string[], expected: string[]): void {
  expect(actual.length).toBe(expected.length)
  const first = actual.findIndex((key, i) => key !== expected[i])
  if (first !== -1)
    expect({ index: first, key: actual[first] }).toEqual({ index: first, key: expected[first] })
}

async function readAll(client: ZkClient, recordSize: RecordSize, punches: ZkPunch[]) {
  const pinOfUid = new Map<number, string>()
  if (recordSize === 8) for (const user of await client.readUsers()) pinOfUid.set(user.uid, user.userId)
  const read = await client.readAttendance()
  expect(read.malformed).toEqual([])
  expect(read.recordBytes).toBe(recordSize)
  expect(read.freeSizes.records).toBe(punches.length)
  expectSameKeys(
    read.records.map((r) => recordKey(r, pinOfUid)),
    punches.map((p) => punchKey(recordSize, p)),
  )
  return read
}

describe.each(TRANSPORTS)('the ZK client and the emulator over %s', (transport) => {
  it.each(RECORD_SIZES)(
    'reads every %i-byte record as it was put in, with the comm key, and enables the device again',
    async (recordSize) => {
      const { device, port } = await startDevice({ recordSize, commKey: 45 })
      const punches = makePunches(recordSize, 3_000, 97)
      device.fillLog(punches.length, (i) => punches[i] as ZkPunch)
      const client = await connect(port, transport, { commKey: 45 })
      expect(await client.readDeviceInfo()).toMatchObject({ serialNumber: 'CEXF212360012' })
      const read = await readAll(client, recordSize, punches)
      // 40- and 8-byte records also carry the device's internal index, the user table's uid.
      if (recordSize !== 16)
        read.records.forEach((record, i) => {
          expect(record.uid).toBe(device.users.get((punches[i] as ZkPunch).userId)?.uid)
        })
      expect(device.stats.chunks).toBeGreaterThan(0)
      expect(device.disabled).toBe(false)
    },
  )

  it.each([12, 0])('is refused with the wrong comm key (%i)', async (commKey) => {
    const { device, port } = await startDevice({ commKey: 45 })
    const error = await failure(ZkClient.connect({ host: '127.0.0.1', port, transport, commKey }))
    expect(error.code).toBe('zk_auth_refused')
    expect(device.stats.authFailures).toBe(1)
  })

  it('is refused a second session while one is open, and given one once it is closed', async () => {
    const { device, port } = await startDevice({})
    const first = await connect(port, transport)
    const error = await failure(ZkClient.connect({ host: '127.0.0.1', port, transport }))
    expect(error.code).toBe('zk_session_refused')
    expect(device.stats.sessionsRefused).toBe(1)
    await first.close()
    const second = await connect(port, transport)
    expect((await second.readAttendance()).records).toEqual([])
  })

  describe('the user table', () => {
    it.each([
      [72, 40, 2],
      [72, 16, 300],
      [28, 8, 2],
      [28, 8, 300],
    ] as const)(
      'reads %i-byte entries (a %i-byte record device) of %i users',
      async (entryBytes, recordSize, count) => {
        const { device, port } = await startDevice({ recordSize })
        const names = entryBytes === 72 ? ['Asha Rao', 'Ravi Kumar Venkataraman'] : ['ASHA', 'RAVI']
        for (let i = 0; i < count; i++) {
          device.users.add({
            userId: recordSize === 40 ? pinOf(40, i) : String(4_822_257 + i),
            uid: 1 + i * 3,
            name: names[i % 2],
            privilege: i === 0 ? 14 : 0,
            password: '1234',
            card: i * 1_000_003,
          })
        }
        const client = await connect(port, transport)
        const before = device.commands.length
        const users = await client.readUsers()
        const expected: ZkUser[] = device.users
          .list()
          .map(({ uid, userId, name, privilege, card }) => ({ uid, userId, name, privilege, card }))
        expect(users).toEqual(expected)
        // Read only: a bulk read and the counts, nothing that writes.
        expect(new Set(device.commands.slice(before))).toEqual(
          new Set(count > 10 ? [50, 1503, 1504, 1502] : [50, 1503]),
        )
        expect(device.disabled).toBe(false)
      },
    )

    it('is empty on a device with no users, without a bulk read', async () => {
      const { device, port } = await startDevice({})
      const client = await connect(port, transport)
      expect(await client.readUsers()).toEqual([])
      expect(device.commands).not.toContain(1503)
    })

    it('maps the uid of 8-byte records to the PINs people know', async () => {
      const { device, port } = await startDevice({ recordSize: 8 })
      // uids far from the PINs, so that a uid taken for a PIN shows.
      for (const [uid, userId] of [
        [7, '4822257'],
        [300, '11'],
        [65535, '900'],
      ] as const)
        device.users.add({ uid, userId })
      const pins = ['11', '4822257', '900', '11', '900']
      for (const [i, userId] of pins.entries()) device.punch({ userId, time: `2026-11-26T09:0${i}:00` })
      const client = await connect(port, transport)
      const pinOfUid = new Map((await client.readUsers()).map((u) => [u.uid, u.userId]))
      const read = await client.readAttendance()
      expect(read.records.map((r) => r.userId)).toEqual(pins.map(() => undefined))
      expect(read.records.map((r) => pinOfUid.get(r.uid as number))).toEqual(pins)
    })
  })

  describe('real-time events', () => {
    /** Each record size's own event form, and the other forms the protocol has. */
    const forms: [RecordSize, ZkEventSize | undefined][] = [
      [40, undefined],
      [16, undefined],
      [8, undefined],
      [40, 14],
      [40, 36],
      [40, 37],
      [40, 52],
    ]
    it.each(forms)(
      'hears each punch of a %i-byte record device (event size %s) and acknowledges it',
      async (recordSize, eventSize) => {
        const { device, port } = await startDevice({ recordSize, ...(eventSize ? { eventSize } : {}) })
        const heard: string[] = []
        const client = await connect(port, transport, {
          // onEvent must not throw: anything but an attlog event shows as its type in `heard`.
          onEvent: (event: ZkEvent) => {
            const { attlog } = event.type === 'attlog' ? event : { attlog: undefined }
            heard.push(
              attlog
                ? `${attlog.userId} ${formatZkWallTime(attlog.time)} ${attlog.state} ${attlog.verify}`
                : event.type,
            )
          },
        })
        await client.registerEvents()
        const pins = recordSize === 40 ? ['E0042', '4822257'] : ['4822257', '77']
        device.punch({ userId: pins[0] as string, time: '2026-11-26T09:01:02', state: 0, verify: 1 })
        device.punch({ userId: pins[1] as string, time: '2026-11-26T09:01:03', state: 1, verify: 15 })
        // The u16 forms (10 and 14 bytes) carry the device's internal index, as 8-byte records do.
        const u16 = device.eventSize === 10 || device.eventSize === 14
        const id = (pin: string) => (u16 ? String(device.users.get(pin)?.uid) : pin)
        await expect
          .poll(() => heard)
          .toEqual([
            `${id(pins[0] as string)} 2026-11-26T09:01:02 0 1`,
            `${id(pins[1] as string)} 2026-11-26T09:01:03 1 15`,
          ])
        await expect.poll(() => device.stats.eventAcks).toBe(2)
        expect(device.stats.eventsSent).toBe(2)
      },
    )
  })

  describe('a log of 100,000 records', () => {
    const logs = new Map<RecordSize, ZkPunch[]>()
    /** Built once per record size, for both transports. */
    const logOf = (recordSize: RecordSize) => {
      let punches = logs.get(recordSize)
      if (!punches) {
        punches = makePunches(recordSize, 100_000, 500)
        logs.set(recordSize, punches)
      }
      return punches
    }

    it.each(RECORD_SIZES)('reads all of a %i-byte record log, in chunks', async (recordSize) => {
      const punches = logOf(recordSize)
      const { device, port } = await startDevice({ recordSize })
      device.fillLog(punches.length, (i) => punches[i] as ZkPunch)
      const client = await connect(port, transport)
      await readAll(client, recordSize, punches)
      expect(device.stats.chunks).toBeGreaterThan(1)
      expect(device.disabled).toBe(false)
    })
  })

  it('fails a read cut mid-chunk, and reads the whole log in a new session', async () => {
    const { device, port } = await startDevice({ faults: { dropAfterChunks: 1 } })
    const punches = makePunches(40, 3_000, 97)
    device.fillLog(punches.length, (i) => punches[i] as ZkPunch)
    // Over UDP the device falls silent mid-chunk: a short timeout keeps the test quick.
    const client = await connect(port, transport, { requestTimeoutMs: 500 })
    const error = await failure(client.readAttendance())
    expect(error.code).toBe(transport === 'tcp' ? 'zk_connection_closed' : 'zk_timeout')
    expect(device.stats.drops).toBe(1)
    expect(client.isOpen).toBe(false)
    // Nobody could enable it again over the lost connection.
    expect(device.disabled).toBe(true)
    device.faults.dropAfterChunks = null
    await expect.poll(() => device.sessionCount).toBe(0)
    const again = await connect(port, transport)
    await readAll(again, 40, punches)
    expect(device.disabled).toBe(false)
  })
})

describe('the ZK client and the emulator over TCP, replies as the network cuts them', () => {
  it.each([
    ['split into segments of 1 to 64 bytes', { splitTcpReplies: 64 }],
    ['merged into one write', { mergeTcpReplies: true }],
  ])('reads the log and the users with replies %s', async (_, faults) => {
    const { device, port } = await startDevice({ recordSize: 8, faults })
    const punches = makePunches(8, 600, 40)
    device.fillLog(punches.length, (i) => punches[i] as ZkPunch)
    // Small chunks, so that a read is many PREPARE_DATA, DATA and ACK_OK packets.
    const client = await connect(port, 'tcp', { maxChunkBytes: 1000 })
    expect(await client.readDeviceInfo()).toMatchObject({ serialNumber: 'CEXF212360012' })
    await readAll(client, 8, punches)
    expect(device.stats.chunks).toBeGreaterThan(4)
    expect(device.disabled).toBe(false)
  })
})

describe('transport auto', () => {
  /**
   * The emulator always listens on TCP and UDP: a device that speaks only UDP is played by a relay
   * on a port of its own, where nothing listens on TCP, passing datagrams to the emulator's UDP.
   */
  async function udpOnly(devicePort: number): Promise<number> {
    const front = createSocket('udp4')
    const back = createSocket('udp4')
    let client: RemoteInfo | undefined
    front.on('message', (msg, rinfo) => {
      client = rinfo
      back.send(msg, devicePort, '127.0.0.1')
    })
    back.on('message', (msg) => {
      if (client) front.send(msg, client.port, client.address)
    })
    await new Promise<void>((resolve) => front.bind(0, '127.0.0.1', resolve))
    await new Promise<void>((resolve) => back.bind(0, '127.0.0.1', resolve))
    cleanups.push(async () => {
      await new Promise<void>((resolve) => front.close(() => resolve()))
      await new Promise<void>((resolve) => back.close(() => resolve()))
    })
    return front.address().port
  }

  it('uses TCP when the device takes TCP connections', async () => {
    const { port } = await startDevice({})
    const client = await connect(port, 'auto')
    expect(client.transportKind).toBe('tcp')
  })

  it('falls back to UDP when nothing listens on TCP, and reads over it', async () => {
    const { device, port } = await startDevice({ commKey: 45 })
    const punches = makePunches(40, 200, 7)
    device.fillLog(punches.length, (i) => punches[i] as ZkPunch)
    const client = await connect(await udpOnly(port), 'auto', { commKey: 45 })
    expect(client.transportKind).toBe('udp')
    await readAll(client, 40, punches)
  })
})
