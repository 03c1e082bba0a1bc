/**
 * The agent's ZK client against the terminal emulator: two implementations of the protocol written
 * apart, from the research notes, so a misreading shows as a disagreement here. Every record size,
 * TCP and UDP, a comm key, a log read in chunks, and real-time events.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZkClient, type ZkEvent } from '../../../../agent/inputs/zk/zk-client.js'
import { formatZkWallTime } from '../../../../agent/inputs/zk/zk-time.js'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'
import type { ZkDeviceOptions } from '../../../../agent/simulator/zk-device/zk-device-options.js'

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
  transport: 'tcp' | 'udp',
  commKey = 0,
  onEvent?: (event: ZkEvent) => void,
) {
  const client = await ZkClient.connect({ host: '127.0.0.1', port, transport, commKey, onEvent })
  cleanups.push(() => client.close())
  return client
}

describe.each(['tcp', 'udp'] as const)('the ZK client and the emulator over %s', (transport) => {
  it.each([40, 16, 8] as const)(
    'read every %i-byte record the device holds, in chunks, and re-enable it',
    async (recordSize) => {
      const { device, port } = await startDevice({ recordSize, commKey: 45 })
      device.fillLog(3_000, (i) => ({
        userId: String(1000 + (i % 97)),
        time: `2026-11-${String(1 + (i % 25)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07`,
        state: i % 2,
        verify: 1,
        workcode: recordSize === 16 ? i % 5 : 0,
      }))
      const client = await connect(port, transport, 45)
      expect(await client.readDeviceInfo()).toMatchObject({ serialNumber: 'CEXF212360012' })
      const read = await client.readAttendance()
      expect(read.malformed).toEqual([])
      expect(read.recordBytes).toBe(recordSize)
      const expected = device.records
      expect(read.records).toHaveLength(expected.length)
      read.records.forEach((record, i) => {
        const want = expected[i]!
        expect(formatZkWallTime(record.time)).toBe(want.time)
        expect(record.state).toBe(want.state)
        expect(record.verify).toBe(want.verify)
        // An 8-byte record names the user by the device's internal index only.
        if (recordSize === 8) expect(record.uid).toBe(want.uid)
        else expect(record.userId).toBe(want.userId)
        if (recordSize === 16) expect(record.workcode).toBe(want.workcode)
      })
      expect(device.stats.chunks).toBeGreaterThan(0)
      expect(device.disabled).toBe(false)
    },
  )

  it('is refused with the wrong comm key', async () => {
    const { port } = await startDevice({ commKey: 45 })
    await expect(ZkClient.connect({ host: '127.0.0.1', port, transport, commKey: 12 })).rejects.toMatchObject(
      {
        code: 'zk_auth_refused',
      },
    )
  })

  it('hears each punch as it happens, and acknowledges it', async () => {
    const { device, port } = await startDevice({})
    const heard: string[] = []
    const client = await connect(port, transport, 0, (event) => {
      if (event.type === 'attlog') heard.push(`${event.attlog.userId} ${formatZkWallTime(event.attlog.time)}`)
    })
    await client.registerEvents()
    device.punch({ userId: '4822257', time: '2026-11-26T09:01:02' })
    device.punch({ userId: '77', time: '2026-11-26T09:01:03' })
    await expect.poll(() => heard).toEqual(['4822257 2026-11-26T09:01:02', '77 2026-11-26T09:01:03'])
    await expect.poll(() => device.stats.eventAcks).toBe(2)
  })
})
