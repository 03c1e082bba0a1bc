/**
 * The ZK 4370 terminal emulator against a raw client written from the research notes
 * (zk-test-client.ts), over TCP and UDP: the published byte vectors, the session and the comm key,
 * options, free sizes, the clock, the attendance log read whole and in chunks (100,000 records),
 * realtime events, and stop(). No assertion depends on how long anything took.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'
import type { ZkDeviceOptions } from '../../../../agent/simulator/zk-device/zk-device-options.js'
import {
  CMD,
  checksum,
  decodeRecords,
  decodeTime,
  encodeTime,
  payload,
  ZkTestClient,
} from './zk-test-client.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(options: ZkDeviceOptions = {}) {
  const device = new ZkDevice({ time: '2026-11-26T09:00:00', ...options })
  const port = await device.start()
  cleanups.push(() => device.stop())
  const open = async (transport: 'tcp' | 'udp') => {
    const client = await ZkTestClient.open(transport, port)
    cleanups.push(() => client.close())
    return client
  }
  return { device, port, open }
}

/** A random() whose first value makes the session id `id` (the emulator picks 1 + floor(r * 0xfffe)). */
function sessionIdRandom(id: number): () => number {
  return () => (id - 1 + 0.5) / 0xfffe
}

const hex = (b: Buffer) => b.toString('hex')

describe('published vectors', () => {
  it('RFC 1071 checksum of the notes: zk-protocol vectors and pyzk connect', () => {
    expect(checksum(Buffer.from('0b000000f38d03005a4b4661636556657273696f6e00', 'hex'))).toBe(0x175a)
    expect(checksum(Buffer.from('d0070000f38d0a0009', 'hex'))).toBe(0x6a29)
    expect(hex(payload(CMD.CONNECT, 0, 0))).toBe('e80317fc00000000')
  })

  it('answers the pyzk CONNECT packet with the published ACK for session 0xfb2f (TCP)', async () => {
    const { open } = await setup({ random: sessionIdRandom(0xfb2f) })
    const client = await open('tcp')
    client.sendRaw(Buffer.from('e80317fc00000000', 'hex'))
    const ack = await client.next()
    expect(hex(payload(ack.cmd, ack.session, ack.reply, ack.data))).toBe('d007fffc2ffb0000')
    expect(ack.checksum).toBe(0xfcff)
  })

  it('accepts the published AUTH packet for comm key 45 and session 0x45cf', async () => {
    const { device, open } = await setup({ commKey: 45, random: sessionIdRandom(0x45cf) })
    const client = await open('tcp')
    const connect = await client.request(CMD.CONNECT)
    expect(connect).toMatchObject({ cmd: CMD.ACK_UNAUTH, session: 0x45cf, reply: 0 })
    client.sendRaw(Buffer.from('4e044db0cf45010061c9323c', 'hex'))
    expect(await client.next((p) => p.reply === 1)).toMatchObject({ cmd: CMD.ACK_OK, session: 0x45cf })
    expect(device.stats.authFailures).toBe(0)
  })
})

describe.each(['tcp', 'udp'] as const)('over %s', (transport) => {
  it('opens a session, answers options and the firmware version, and ends it on EXIT', async () => {
    const { device, open } = await setup({ serialNumber: 'CKJ8203960093', platform: 'ZEM600_TFT' })
    const client = await open(transport)
    const connect = await client.connect()
    expect(connect.cmd).toBe(CMD.ACK_OK)
    expect(connect.session).not.toBe(0)
    const option = async (name: string) => client.request(CMD.OPTIONS_RRQ, Buffer.from(`${name}\0`))
    expect((await option('~SerialNumber')).data.toString()).toBe('~SerialNumber=CKJ8203960093\0')
    expect((await option('~Platform')).data.toString()).toBe('~Platform=ZEM600_TFT\0')
    expect((await option('~ZKFPVersion')).data.toString()).toBe('~ZKFPVersion=10\0')
    expect((await option('~NoSuchOption')).cmd).toBe(CMD.ACK_ERROR)
    expect((await client.request(CMD.OPTIONS_WRQ, Buffer.from('SDKBuild=1\0'))).cmd).toBe(CMD.ACK_OK)
    expect((await option('SDKBuild')).data.toString()).toBe('SDKBuild=1\0')
    expect((await client.request(CMD.GET_VERSION)).data.toString()).toBe('Ver 6.60 Apr 28 2017\0')
    expect((await client.request(4242)).cmd).toBe(CMD.ACK_UNKNOWN)
    expect(device.sessionCount).toBe(1)
    expect((await client.request(CMD.EXIT)).cmd).toBe(CMD.ACK_OK)
    expect(device.sessionCount).toBe(0)
    expect(client.badChecksums).toBe(0)
  })

  it('asks for the comm key, refuses a wrong one and accepts the right one', async () => {
    const { device, open } = await setup({ commKey: 123456 })
    const wrong = await open(transport)
    expect((await wrong.connect(654321)).cmd).toBe(CMD.ACK_UNAUTH)
    expect(device.stats.authFailures).toBe(1)
    expect((await wrong.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_UNAUTH)
    await wrong.request(CMD.EXIT)
    const right = await open(transport)
    expect((await right.connect(123456)).cmd).toBe(CMD.ACK_OK)
    expect((await right.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_OK)
  })

  it('ignores a request whose checksum is wrong, and answers the next one', async () => {
    const { device, open } = await setup()
    const client = await open(transport)
    await client.connect()
    const bad = payload(CMD.GET_TIME, client.session, 7)
    bad.writeUInt16LE(bad.readUInt16LE(2) ^ 0x0101, 2)
    client.sendRaw(bad)
    client.sendRaw(payload(CMD.GET_TIME, client.session, 8))
    const answer = await client.next()
    // Requests are answered in order, so a reply to 7 would have come first.
    expect(answer.reply).toBe(8)
    expect(device.stats.badChecksums).toBe(1)
  })

  it('reports free sizes: users, records and capacity', async () => {
    const { device, open } = await setup({ recordCapacity: 50_000, userCapacity: 1000 })
    device.fillLog(1234)
    const client = await open(transport)
    await client.connect()
    const sizes = (await client.request(CMD.GET_FREE_SIZES)).data
    expect(sizes.length).toBe(92)
    const word = (i: number) => sizes.readUInt32LE(i * 4)
    expect([word(4), word(8), word(15), word(16), word(18), word(19)]).toEqual([
      100, 1234, 1000, 50_000, 900, 48_766,
    ])
  })

  it('keeps a wall clock that runs with now(), and can be set backwards', async () => {
    let hostNow = Date.parse('2030-01-01T00:00:00Z')
    const { open } = await setup({ time: '2026-11-26T10:00:00', now: () => hostNow })
    const client = await open(transport)
    await client.connect()
    const deviceTime = async () => decodeTime((await client.request(CMD.GET_TIME)).data.readUInt32LE(0))
    expect(await deviceTime()).toBe('2026-11-26T10:00:00')
    hostNow += 90_500
    expect(await deviceTime()).toBe('2026-11-26T10:01:30')
    const set = Buffer.alloc(4)
    set.writeUInt32LE(encodeTime('2025-01-31T23:59:58'))
    expect((await client.request(CMD.SET_TIME, set)).cmd).toBe(CMD.ACK_OK)
    expect(await deviceTime()).toBe('2025-01-31T23:59:58')
    hostNow += 3000
    expect(await deviceTime()).toBe('2025-02-01T00:00:01')
  })

  it('sends a small log whole in one CMD_DATA', async () => {
    const { device, open } = await setup()
    device.punch({ userId: '999111333', time: '2018-06-25T17:50:35', verify: 1, state: 0 })
    device.punch({ userId: '42', time: '2026-11-26T08:59:00', verify: 15, state: 1 })
    const client = await open(transport)
    await client.connect()
    const { dataset, chunked } = await client.readDataset()
    expect(chunked).toBe(false)
    expect(dataset.readUInt32LE(0)).toBe(80)
    expect(decodeRecords(dataset, 40)).toEqual([
      { uid: 1, userId: '999111333', time: '2018-06-25T17:50:35', verify: 1, state: 0 },
      { uid: 2, userId: '42', time: '2026-11-26T08:59:00', verify: 15, state: 1 },
    ])
  })

  it('sends 100,000 records in chunks that decode to the records put in', async () => {
    const { device, open } = await setup()
    device.fillLog(100_000, (i) => ({
      userId: `E${i % 977}`,
      time: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07`,
      verify: i % 16,
      state: i % 6,
    }))
    const client = await open(transport)
    await client.connect()
    expect((await client.request(CMD.DISABLEDEVICE)).cmd).toBe(CMD.ACK_OK)
    expect(device.disabled).toBe(true)
    const { dataset, chunked } = await client.readDataset()
    expect((await client.request(CMD.ENABLEDEVICE)).cmd).toBe(CMD.ACK_OK)
    expect(device.disabled).toBe(false)
    expect(chunked).toBe(true)
    expect(dataset.length).toBe(4 + 100_000 * 40)
    const expected = device.records.map(({ uid, userId, time, verify, state }) => ({
      uid,
      userId,
      time,
      verify,
      state,
    }))
    expect(decodeRecords(dataset, 40)).toEqual(expected)
    expect(expected[99_999]).toMatchObject({ userId: `E${99_999 % 977}`, time: '2026-04-12T15:39:07' })
    expect(device.stats.chunks).toBe(Math.ceil(dataset.length / (transport === 'tcp' ? 0xffc0 : 16 * 1024)))
    expect(client.badChecksums).toBe(0)
  })

  it.each([16, 8] as const)('writes %i-byte records', async (recordSize) => {
    const { device, open } = await setup({ recordSize })
    device.users.add({ userId: '4822257', uid: 7 })
    device.fillLog(300, (i) => ({
      userId: i % 2 ? '4822257' : '12',
      time: '2018-12-07T19:09:06',
      state: i % 6,
    }))
    const client = await open(transport)
    await client.connect()
    const { dataset, chunked } = await client.readDataset()
    expect(chunked).toBe(true)
    expect(dataset.readUInt32LE(0)).toBe(300 * recordSize)
    const records = decodeRecords(dataset, recordSize)
    expect(records).toHaveLength(300)
    if (recordSize === 16)
      expect(records[1]).toMatchObject({ userId: '4822257', time: '2018-12-07T19:09:06', state: 1 })
    else expect(records[1]).toMatchObject({ uid: 7, time: '2018-12-07T19:09:06', state: 1 })
    // 8-byte records name the uid: the user table (72 or 28-byte entries) gives the user id.
    const users = (await client.readDataset(CMD.USERTEMP_RRQ, 5)).dataset
    const entry = recordSize === 8 ? 28 : 72
    expect(users.readUInt32LE(0)).toBe(2 * entry)
    const first = users.subarray(4, 4 + entry)
    expect(first.readUInt16LE(0)).toBe(7)
    if (entry === 28) expect(first.readUInt32LE(24)).toBe(4822257)
    else expect(first.subarray(48, 55).toString()).toBe('4822257')
  })

  it('clears the log on CLEAR_ATTLOG', async () => {
    const { device, open } = await setup()
    device.fillLog(10)
    const client = await open(transport)
    await client.connect()
    expect((await client.request(CMD.CLEAR_ATTLOG)).cmd).toBe(CMD.ACK_OK)
    expect(device.recordCount).toBe(0)
    expect((await client.readDataset()).dataset).toEqual(Buffer.from([0, 0, 0, 0]))
  })

  it('pushes each new punch as an EF_ATTLOG event after REG_EVENT, and counts the ACKs', async () => {
    const { device, open } = await setup()
    const client = await open(transport)
    await client.connect()
    device.punch({ userId: '1', time: '2026-11-26T08:00:00' })
    const flags = Buffer.alloc(4)
    flags.writeUInt32LE(1)
    expect((await client.request(CMD.REG_EVENT, flags)).cmd).toBe(CMD.ACK_OK)
    device.punch({ userId: '1140064', time: '2018-11-29T12:55:03', verify: 15, state: 0 })
    const event = await client.next((p) => p.cmd === CMD.REG_EVENT)
    expect(event).toMatchObject({ session: 1, reply: 0 })
    // pyzk's published 32-byte event: "1140064" padded to 24, verify 15, state 0, 18-11-29 12:55:03.
    expect(hex(event.data)).toBe(`${hex(Buffer.from('1140064'.padEnd(24, '\0')))}0f00120b1d0c3703`)
    client.sendRaw(payload(CMD.ACK_OK, client.session, 0))
    await vi.waitFor(() => expect(device.stats.eventAcks).toBe(1))
    expect(device.stats.eventsSent).toBe(1)
  })

  it('refuses a second session while one is open, and allows it when told to', async () => {
    const { device, open } = await setup()
    const first = await open(transport)
    await first.connect()
    const second = await open(transport)
    expect((await second.request(CMD.CONNECT)).cmd).toBe(CMD.ACK_ERROR)
    expect(device.stats.sessionsRefused).toBe(1)
    device.faults.refuseSecondSession = false
    const third = await open(transport)
    expect((await third.connect()).cmd).toBe(CMD.ACK_OK)
    expect(device.sessionCount).toBe(2)
  })
})

describe('sessions', () => {
  it('keeps the session id on a second CONNECT from the same client', async () => {
    const { device, open } = await setup()
    const client = await open('tcp')
    const first = await client.connect()
    const again = await client.request(CMD.CONNECT)
    expect(again).toMatchObject({ cmd: CMD.ACK_OK, session: first.session })
    expect(device.stats.sessions).toBe(1)
  })

  it('lets a new client in once a UDP session has gone quiet', async () => {
    let hostNow = 0
    const { device, open } = await setup({ now: () => hostNow, udpSessionIdleMs: 60_000 })
    const quiet = await open('udp')
    await quiet.connect()
    const other = await open('tcp')
    expect((await other.request(CMD.CONNECT)).cmd).toBe(CMD.ACK_ERROR)
    hostNow += 60_001
    const late = await open('tcp')
    expect((await late.connect()).cmd).toBe(CMD.ACK_OK)
    expect(device.sessionCount).toBe(1)
    expect((await quiet.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_UNAUTH)
  })

  it('answers ACK_UNAUTH without a session and ACK_ERROR to a chunk outside the dataset', async () => {
    const { device, open } = await setup()
    device.fillLog(100)
    const client = await open('udp')
    expect((await client.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_UNAUTH)
    await client.connect()
    const rdy = Buffer.alloc(8)
    rdy.writeInt32LE(0, 0)
    rdy.writeInt32LE(100, 4)
    expect((await client.request(CMD.DATA_RDY, rdy)).cmd).toBe(CMD.ACK_ERROR)
    const wrrq = Buffer.from('010d000000000000000000', 'hex')
    const stat = await client.request(CMD.DATA_WRRQ, wrrq)
    expect(stat.cmd).toBe(CMD.ACK_OK)
    expect([stat.data.length, stat.data[0], stat.data.readUInt32LE(1), stat.data.readUInt32LE(5)]).toEqual([
      13, 0, 4004, 4004,
    ])
    rdy.writeInt32LE(4000, 0)
    expect((await client.request(CMD.DATA_RDY, rdy)).cmd).toBe(CMD.ACK_ERROR)
  })
})

describe('16- and 8-byte events', () => {
  it('sends the 12-byte event of pyzk test.py for a 16-byte device', async () => {
    const { device, open } = await setup({ recordSize: 16 })
    const client = await open('tcp')
    await client.connect()
    await client.request(CMD.REG_EVENT, Buffer.from('01000000', 'hex'))
    device.punch({ userId: '4822257', time: '2018-12-07T19:09:06', verify: 0 })
    expect(hex((await client.next((p) => p.cmd === CMD.REG_EVENT)).data)).toBe(
      'f194490000' + '00120c07130906',
    )
  })

  it('sends a 10-byte event with the uid for an 8-byte device', async () => {
    const { device, open } = await setup({ recordSize: 8 })
    device.users.add({ userId: '77', uid: 3 })
    const client = await open('udp')
    await client.connect()
    await client.request(CMD.REG_EVENT, Buffer.from('01000000', 'hex'))
    device.punch({ userId: '77', time: '2026-11-26T09:15:00', verify: 1, state: 1 })
    expect(hex((await client.next((p) => p.cmd === CMD.REG_EVENT)).data)).toBe('030001011a0b1a090f00')
  })
})

describe('stop', () => {
  it('closes the listeners and the connections', async () => {
    const device = new ZkDevice({ faults: { replyDelayMs: 60_000 } })
    const port = await device.start()
    const client = await ZkTestClient.open('tcp', port)
    cleanups.push(() => client.close())
    const pending = client.request(CMD.CONNECT)
    await vi.waitFor(() => expect(device.commands).toEqual([CMD.CONNECT]))
    await device.stop()
    await expect(pending).rejects.toThrow('closed')
    await expect(ZkTestClient.open('tcp', port)).rejects.toThrow()
  })
})
