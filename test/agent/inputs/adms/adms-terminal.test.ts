/**
 * The agent's ADMS listener with whole terminals in front of it: the firmware model
 * (agent/simulator/adms-device.ts, written from the Attendance PUSH protocol, not from the
 * listener) handshakes, sets its clock and zone from the reply, uploads until it hears `OK: n`,
 * resumes from the cursor the agent hands back, polls for commands and runs them. Delays are the
 * agent's own (Delay 10 s, ErrorDelay 30 s) scaled down by the model's timeScale; nothing here
 * asserts how long anything took.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { AdmsDevice } from '../../../../agent/simulator/adms-device.js'
import type { AdmsDeviceOptions } from '../../../../agent/simulator/adms-device-options.js'
import { AdmsHandshakeError } from '../../../../agent/simulator/adms-errors.js'
import { SpoolFullError } from '../../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../../shared/time.js'
import { HeldSink, RefusingSink } from '../mqtt-test-agent.js'
import { type AdmsRig, admsDevice, SERIAL, startAdmsRig } from './adms-test-kit.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function rig(options: Parameters<typeof startAdmsRig>[0] = {}): Promise<AdmsRig> {
  const r = await startAdmsRig(options)
  cleanups.push(() => r.close())
  return r
}

/** A terminal pointed at the rig, its delays a thousandth of what the agent asks. */
async function terminal(r: AdmsRig, options: Partial<AdmsDeviceOptions> = {}): Promise<AdmsDevice> {
  const device = new AdmsDevice({
    url: `http://127.0.0.1:${r.port}`,
    serialNumber: SERIAL,
    timeScale: 0.001,
    ...options,
  })
  cleanups.push(() => device.stop())
  await device.start()
  return device
}

const MINUTE = 60_000
/** Who punched at which instant, and which way: what the spool and the terminal must agree on. */

describe('a terminal pushing to the agent', () => {
  it("takes the agent's clock and zone, and every punch it makes is stored as the instant it was made", async () => {
    const r = await rig({
      devices: [
        admsDevice('gate-1', SERIAL),
        admsDevice('dubai-1', 'AEH2192760012', { timezone: 'Asia/Dubai' }),
      ],
    })
    // Both terminals start with a clock four months off and in UTC: only the handshake can fix them.
    const SHIFT = 120 * 24 * 3600_000
    const india = await terminal(r, { now: () => Date.now() - SHIFT })
    const dubai = await terminal(r, { serialNumber: 'AEH2192760012', now: () => Date.now() - SHIFT })
    expect(india.timeZoneMinutes).toBe(330)
    expect(dubai.timeZoneMinutes).toBe(240)
    const start = Math.floor(Date.now() / 1000) * 1000 - 60 * MINUTE
    const made: { device: string; code: string; type: string; at: number }[] = []
    const acknowledged: Promise<void>[] = []
    for (let i = 0; i < 40; i++) {
      const device = i % 2 === 0 ? india : dubai
      const at = start + i * MINUTE
      const code = `E${100 + i}`
      const type = i % 4 === 3 ? 'OUT' : 'IN'
      // The terminal writes the moment in its own clock, set from the Date header: host time + offset.
      acknowledged.push(device.punch({ pin: code, status: type === 'OUT' ? 1 : 0, at: at - SHIFT }))
      made.push({ device: i % 2 === 0 ? 'gate-1' : 'dubai-1', code, type, at })
    }
    await Promise.all(acknowledged)
    const stored = new Map((await r.agent.punches()).map((p) => [p.employeeCode, p]))
    expect(stored.size).toBe(40)
    for (const punch of made) {
      const got = stored.get(punch.code)
      expect(got?.deviceId).toBe(punch.device)
      expect(got?.punchType).toBe(punch.type)
      // The Date header has whole seconds, so a terminal's clock is up to a second behind the
      // agent's after a handshake; nothing else may separate the two instants.
      const instant = (parseTimestamp(got?.punchedAt ?? '') as number) / 1000
      expect(punch.at - instant).toBeGreaterThanOrEqual(0)
      expect(punch.at - instant).toBeLessThanOrEqual(1000)
    }
  })

  it.each([
    { fields: 5 as const, lineEnding: '\n' as const, contentType: 'text/plain' },
    { fields: 7 as const, lineEnding: '\r\n' as const, contentType: 'application/x-www-form-urlencoded' },
    { fields: 9 as const, lineEnding: '\n' as const, contentType: 'application/push;charset=UTF-8' },
    { fields: 12 as const, lineEnding: '\r\n' as const, contentType: null },
  ])('is read whatever its firmware writes: $fields fields, $lineEnding, $contentType', async (style) => {
    const r = await rig()
    const device = await terminal(r, { ...style, batchSize: 5 })
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => device.punch({ pin: String(200 + i), status: i % 2 })),
    )
    const punches = await r.agent.punches()
    expect(punches.map((p) => p.employeeCode).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => String(200 + i)),
    )
    expect(await r.agent.deadLettered()).toEqual([])
  })

  it('keeps a batch the agent could not store, and sends it again until it is stored', async () => {
    let refusals = 2
    const r = await rig({
      sink: (a) =>
        new RefusingSink(a.intake, () => (refusals-- > 0 ? new SpoolFullError('disk') : undefined)),
    })
    const device = await terminal(r)
    await device.punch({ pin: 'E001', status: 0 })
    expect(device.stats.batchesResent).toBe(2)
    expect(await r.agent.punches()).toHaveLength(1)
  })

  it('sends a batch again when the answer is lost, and the copies share their punch ids', async () => {
    // The first upload is stored, but so slowly that the terminal gives up waiting for the answer.
    const r = await rig({ sink: (a) => new HeldSink(a.intake) })
    const held = (r.input as unknown as { options: { sink: HeldSink } }).options.sink
    const device = await terminal(r, { requestTimeoutMs: 200 })
    const acknowledged = device.punch({ pin: 'E001', status: 0 })
    await until(() => held.held.length >= 1)
    await until(() => device.stats.failures >= 1)
    for (;;) {
      const next = held.held.shift()
      next?.release()
      if (device.log.every((record) => record.acknowledged)) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await acknowledged
    const punches = await r.agent.punches()
    expect(punches.length).toBeGreaterThanOrEqual(2)
    expect(new Set(punches.map((p) => p.id)).size).toBe(1)
  })

  it('resumes after a reboot from the cursor the agent hands back: nothing acknowledged is sent again', async () => {
    const r = await rig()
    const device = await terminal(r)
    await Promise.all(Array.from({ length: 5 }, (_, i) => device.punch({ pin: `E00${i}`, status: 0 })))
    const posted = device.stats.batchesPosted
    await device.reboot()
    expect(device.cursor).toBe(device.log.at(-1)?.stamp)
    await device.punch({ pin: 'E009', status: 1 })
    expect(device.stats.batchesPosted).toBe(posted + 1)
    expect(await r.agent.punches()).toHaveLength(6)
  })

  it('resumes from the cursor after the agent restarts too', async () => {
    const r = await rig()
    const device = await terminal(r)
    await Promise.all(Array.from({ length: 5 }, (_, i) => device.punch({ pin: `E00${i}`, status: 0 })))
    await r.restart()
    // The port changed with the restart: a terminal pointed at the new one boots and handshakes.
    const again = await terminal(r, { firstStamp: (device.log.at(-1)?.stamp ?? 0) + 1 })
    expect(again.cursor).toBe(device.log.at(-1)?.stamp)
  })

  it('sends everything again after a stamp reset, which is stored under the same ids and counted as resent', async () => {
    const r = await rig()
    const resent: number[] = []
    r.agent.events.on('punchesResent', (e) => {
      resent.push(e.count)
    })
    const device = await terminal(r, { batchSize: 10 })
    await Promise.all(Array.from({ length: 25 }, (_, i) => device.punch({ pin: `E${i}`, status: i % 2 })))
    const first = await r.agent.punches()
    device.forgetStamps()
    await device.reboot()
    await until(() => r.agent.spool.stats().items >= 50)
    const all = await r.agent.punches()
    expect(all).toHaveLength(50)
    expect(new Set(all.map((p) => p.id))).toEqual(new Set(first.map((p) => p.id)))
    expect(resent.reduce((a, b) => a + b, 0)).toBe(25)
    expect(r.input.report().devices['gate-1']?.recordsReceived).toBe(50)
  })

  it('uploads a period again when asked (backfill), and never receives a command that changes it', async () => {
    const r = await rig()
    const device = await terminal(r)
    // Records the terminal made days ago, as its log holds them.
    for (const line of [
      'E001\t2026-11-19 09:00:00\t0\t1\t0',
      'E001\t2026-11-20 09:00:00\t0\t1\t0',
      'E001\t2026-11-20 18:00:00\t1\t1\t0',
      'E001\t2026-11-21 09:00:00\t0\t1\t0',
    ]) {
      await device.addLine(line)
    }
    const before = (await r.agent.punches()).length
    expect(before).toBe(4)
    const command = await r.input.backfill(
      'gate-1',
      parseTimestamp('2026-11-20T00:00:00+05:30') as number,
      parseTimestamp('2026-11-20T23:59:59+05:30') as number,
    )
    await until(
      () =>
        r.input.report().devices['gate-1']?.commands.some((c) => c.id === command.id && c.state === 'done') ??
        false,
    )
    const after = await r.agent.punches()
    // The 20th's two records came again, as ordinary uploads.
    expect(
      after
        .slice(before)
        .map((p) => p.punchedAt)
        .sort(),
    ).toEqual(['2026-11-20T09:00:00+05:30', '2026-11-20T18:00:00+05:30'])
    const words = device.commandsReceived.map((c) => c.command.split(' ').slice(0, 3).join(' '))
    expect(new Set(words)).toEqual(new Set(['INFO', 'DATA QUERY ATTLOG']))
  })

  it("reports the terminal's figures from its INFO answer", async () => {
    const r = await rig()
    const device = await terminal(r, {
      model: 'SpeedFace-V5L',
      firmware: 'ZAM180-NF-Ver1.1.17',
      info: { users: 40, attLogCapacity: 200_000 },
    })
    await device.punch({ pin: 'E001', status: 0 })
    await until(() => r.input.report().devices['gate-1']?.model !== null)
    expect(r.input.report().devices['gate-1']).toMatchObject({
      serialNumber: SERIAL,
      protocolVersion: 'push 2.4.1',
      model: 'SpeedFace-V5L',
      firmware: 'ZAM180-NF-Ver1.1.17',
      counts: { users: 40, attendanceCapacity: 200_000 },
      address: '127.0.0.1',
    })
  })

  it('is refused, keeping its records, when its serial number is not configured', async () => {
    const r = await rig()
    const device = new AdmsDevice({
      url: `http://127.0.0.1:${r.port}`,
      serialNumber: 'NOTCONFIGURED1',
      timeScale: 0.001,
    })
    cleanups.push(() => device.stop())
    await expect(device.start({ failFast: true })).rejects.toBeInstanceOf(AdmsHandshakeError)
    expect(r.input.report().unknownDevices.map((u) => u.serialNumber)).toEqual(['NOTCONFIGURED1'])
    expect(await r.agent.punches()).toEqual([])
  })
})

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!condition()) throw new Error('condition never held')
}
