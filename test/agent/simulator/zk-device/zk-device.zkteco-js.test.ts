/**
 * Interoperability: the emulator read by an independent open-source client, zkteco-js (MIT, a fork
 * of node-zklib), over TCP: device info, the clock, the attendance log of 40-byte records whole and
 * in chunks, and realtime events. zkteco-js reads device times into Dates in the host's zone, so
 * wall-clock fields are compared through the Date's local getters, never as instants.
 */
import { createRequire } from 'node:module'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'

/** The part of zkteco-js's API the test uses (the package ships no types). */
interface ZktecoJs {
  createSocket(): Promise<boolean>
  getInfo(): Promise<{ userCounts: number; logCounts: number; logCapacity: number }>
  getSerialNumber(): Promise<string>
  getPlatform(): Promise<string>
  getDeviceVersion(): Promise<string>
  getFirmware(): Promise<string>
  getTime(): Promise<Date>
  getAttendances(): Promise<{
    data: { sn: number; user_id: string; record_time: string; type: number; state: number }[]
  }>
  getRealTimeLogs(cb: (log: { userId: string; attTime: Date }) => void): Promise<void>
  disconnect(): Promise<unknown>
}
const ZktecoJsClass = createRequire(import.meta.url)('zkteco-js') as new (
  ip: string,
  port: number,
  timeout: number,
  inport: number,
) => ZktecoJs

const pad = (n: number) => String(n).padStart(2, '0')
/** The wall time a host-zone Date stands for. */
const wall = (d: Date) =>
  `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`

const cleanups: (() => Promise<unknown>)[] = []
beforeEach(() => {
  // zkteco-js reports on the console as it goes.
  vi.spyOn(console, 'log').mockImplementation(() => {})
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  vi.restoreAllMocks()
})

async function setup(fill: number) {
  const hostNow = Date.parse('2031-05-05T05:05:05Z')
  const device = new ZkDevice({
    serialNumber: 'CKJ8203960093',
    platform: 'ZEM600_TFT',
    firmware: 'Ver 6.60 Oct 29 2019',
    time: '2026-11-26T09:30:00',
    now: () => hostNow,
  })
  device.fillLog(fill, (i) => ({
    userId: String(100_000 + (i % 57)),
    time: `2026-${pad(1 + (i % 12))}-${pad(1 + (i % 28))}T${pad(i % 24)}:${pad(i % 60)}:${pad((i * 7) % 60)}`,
    verify: i % 2 ? 1 : 15,
    state: i % 6,
  }))
  const port = await device.start()
  cleanups.push(() => device.stop())
  const zk = new ZktecoJsClass('127.0.0.1', port, 10_000, 0)
  await zk.createSocket()
  cleanups.push(() => zk.disconnect().catch(() => {}))
  return { device, zk }
}

describe('zkteco-js reading the emulator over TCP', () => {
  it('reads device info, the clock and a log large enough to come in chunks', async () => {
    const { device, zk } = await setup(3000)
    expect(await zk.getInfo()).toEqual({ userCounts: 57, logCounts: 3000, logCapacity: 100_000 })
    expect(await zk.getSerialNumber()).toBe('CKJ8203960093')
    expect(await zk.getPlatform()).toBe('ZEM600_TFT')
    expect(await zk.getDeviceVersion()).toBe('10')
    // It keeps the NUL that ends the version string.
    expect((await zk.getFirmware()).replace(/\0+$/, '')).toBe('Ver 6.60 Oct 29 2019')
    expect(wall(await zk.getTime())).toBe('2026-11-26T09:30:00')

    const { data } = await zk.getAttendances()
    expect(device.stats.chunks).toBe(2)
    expect(data).toHaveLength(3000)
    expect(
      data.map((r) => ({
        uid: r.sn,
        userId: r.user_id,
        time: wall(new Date(r.record_time)),
        verify: r.type,
        state: r.state,
      })),
    ).toEqual(
      device.records.map(({ uid, userId, time, verify, state }) => ({ uid, userId, time, verify, state })),
    )
    expect(device.commands).toContain(1502)
  })

  it('reads a small log sent whole in one CMD_DATA', async () => {
    const { device, zk } = await setup(20)
    const { data } = await zk.getAttendances()
    expect(device.stats.chunks).toBe(0)
    expect(data.map((r) => [r.user_id, wall(new Date(r.record_time))])).toEqual(
      device.records.map((r) => [r.userId, r.time]),
    )
  })

  it('receives realtime punches (and, unlike firmware clients, does not acknowledge them)', async () => {
    const { device, zk } = await setup(0)
    const logs: { userId: string; attTime: Date }[] = []
    await zk.getRealTimeLogs((log) => logs.push(log))
    // It sends REG_EVENT without waiting for the reply; the device registers it as it reads it.
    await vi.waitFor(() => expect(device.commands).toContain(500))
    device.punch({ userId: '100042', time: '2026-11-26T09:31:15' })
    await vi.waitFor(() => expect(logs).toHaveLength(1))
    expect(logs[0]!.userId).toBe('100042')
    expect(wall(logs[0]!.attTime)).toBe('2026-11-26T09:31:15')
    expect(device.stats.eventAcks).toBe(0)
  })
})
