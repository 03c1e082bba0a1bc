/**
 * The emulator's faults, switched while it runs: slow replies, a connection dropped mid-read, a
 * second session refused, TCP replies split into small segments or merged into one write. The
 * raw client is the notes' (zk-test-client.ts); the delay is driven by fake timers, never waited.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'
import type { ZkDeviceOptions } from '../../../../agent/simulator/zk-device/zk-device-options.js'
import { CMD, decodeRecords, ZkTestClient } from './zk-test-client.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  vi.useRealTimers()
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
  return { device, open }
}

const expectedRecords = (device: ZkDevice) =>
  device.records.map(({ uid, userId, time, verify, state }) => ({ uid, userId, time, verify, state }))

describe('slow replies', () => {
  it.each(['tcp', 'udp'] as const)('holds every %s reply for replyDelayMs', async (transport) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { device, open } = await setup({ faults: { replyDelayMs: 5000 } })
    const client = await open(transport)
    const connected = client.connect()
    await vi.waitFor(() => expect(device.commands).toEqual([CMD.CONNECT]))
    expect(client.received).toEqual([])
    await vi.advanceTimersByTimeAsync(5000)
    expect((await connected).cmd).toBe(CMD.ACK_OK)
    device.faults.replyDelayMs = 0
    expect((await client.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_OK)
  })
})

describe('a connection dropped mid-read', () => {
  it('over TCP: closes the connection inside the chunk after N, then serves a new session', async () => {
    const { device, open } = await setup({ faults: { dropAfterChunks: 1 } })
    device.fillLog(5000)
    const client = await open('tcp')
    await client.connect()
    await client.request(CMD.DISABLEDEVICE)
    await expect(client.readDataset()).rejects.toThrow('closed')
    expect(device.stats).toMatchObject({ drops: 1, chunks: 1 })
    // The device stays disabled: only the client can enable it again.
    expect(device.disabled).toBe(true)
    await vi.waitFor(() => expect(device.sessionCount).toBe(0))
    device.faults.dropAfterChunks = null
    const again = await open('tcp')
    await again.connect()
    const { dataset } = await again.readDataset()
    expect(decodeRecords(dataset, 40)).toEqual(expectedRecords(device))
  })

  it('over UDP: stops halfway through the chunk after N and ends the session', async () => {
    const { device, open } = await setup({ faults: { dropAfterChunks: 2 } })
    device.fillLog(2000)
    const client = await open('udp')
    await client.connect()
    void client.readDataset().catch(() => {})
    await vi.waitFor(() => expect(device.stats.drops).toBe(1))
    expect(device.stats.chunks).toBe(2)
    expect(device.sessionCount).toBe(0)
    expect((await client.request(CMD.GET_TIME)).cmd).toBe(CMD.ACK_UNAUTH)
    device.faults.dropAfterChunks = null
    await client.connect()
    const { dataset } = await client.readDataset()
    expect(decodeRecords(dataset, 40)).toEqual(expectedRecords(device))
  })
})

describe('TCP segmentation', () => {
  it('by default sends each packet of a chunk in a write of its own', async () => {
    const { device, open } = await setup()
    device.fillLog(60)
    const client = await open('tcp')
    await client.connect()
    const before = client.tcpReads.length
    await client.readDataset(CMD.ATTLOG_RRQ, 0, 1000)
    // DATA_WRRQ's ACK, then per chunk PREPARE_DATA, DATA and ACK_OK, then FREE_DATA's ACK.
    expect(client.tcpReads.slice(before)).toEqual([29, 24, 1016, 16, 24, 1016, 16, 24, 420, 16, 16])
  })

  it('splits every reply into random small segments when told to', async () => {
    const { device, open } = await setup()
    device.fillLog(60)
    const client = await open('tcp')
    await client.connect()
    device.faults.splitTcpReplies = 5
    const before = client.tcpReads.length
    const { dataset } = await client.readDataset(CMD.ATTLOG_RRQ, 0, 1000)
    expect(decodeRecords(dataset, 40)).toEqual(expectedRecords(device))
    const reads = client.tcpReads.slice(before)
    expect(reads.reduce((a, b) => a + b, 0)).toBe(29 + 3 * (24 + 16 + 16) + 2404 + 16)
    expect(reads.length).toBeGreaterThan(2404 / 5)
    expect(client.badChecksums).toBe(0)
  })

  it('merges the packets of a chunk, and events, into one write when told to', async () => {
    const { device, open } = await setup()
    device.fillLog(60)
    const client = await open('tcp')
    await client.connect()
    device.faults.mergeTcpReplies = true
    const before = client.tcpReads.length
    const { dataset } = await client.readDataset(CMD.ATTLOG_RRQ, 0, 1000)
    expect(decodeRecords(dataset, 40)).toEqual(expectedRecords(device))
    expect(client.tcpReads.slice(before)).toEqual([29, 1056, 1056, 460, 16])
    await client.request(CMD.REG_EVENT, Buffer.from('01000000', 'hex'))
    const reads = client.tcpReads.length
    device.punch({ userId: '5' })
    device.punch({ userId: '6' })
    await client.next((p) => p.cmd === CMD.REG_EVENT)
    await client.next((p) => p.cmd === CMD.REG_EVENT)
    expect(client.tcpReads.slice(reads)).toEqual([2 * (8 + 8 + 32)])
  })
})
