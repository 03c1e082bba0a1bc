import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AgentConfig, DeviceConfig } from '../../../agent/config/schema.js'
import { type AgentEvents, EventBus } from '../../../agent/events.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../shared/time.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'

/**
 * Which zone a device's local time is read in, as the agent wires it (PunchIntake over a real
 * spool): the device's own, else the site's (whose default, Asia/Kolkata, the config tests cover).
 */

const log = pino({ level: 'silent' })
const NOW = parseTimestamp('2026-11-21T12:00:00Z') as number

function mqttDevice(id: string, extra: Partial<DeviceConfig> = {}): DeviceConfig {
  return { id, mqtt: { topic: `punches/${id}`, format: 'json' }, ...extra }
}

let dir: string
let spool: Spool
let deadLetters: DeadLetters
let events: EventBus

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-zone-'))
  events = new EventBus(log)
  spool = new Spool({ dir: join(dir, 'spool'), maxBytes: 1 << 30, chunkPunches: 500, log, events })
  deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
  await spool.start()
  await deadLetters.open()
})
afterEach(async () => {
  await spool.stop()
  await deadLetters.drain()
  await rm(dir, { recursive: true, force: true })
})

function intake(site: AgentConfig['site'], devices: DeviceConfig[]): PunchIntake {
  return new PunchIntake({ config: { site, devices }, spool, deadLetters, events, log, now: () => NOW })
}

async function stored(): Promise<SpooledPunch[]> {
  const all: SpooledPunch[] = []
  for (const ref of spool.pending()) all.push(...(await spool.read(ref)))
  return all
}

const frame = (punchedAt?: string) =>
  Buffer.from(JSON.stringify({ employeeCode: 'E001', punchType: 'IN', ...(punchedAt ? { punchedAt } : {}) }))

describe('the zone of a device clock', () => {
  it("reads local times in the site's zone, and in a device's own zone where it names one", async () => {
    const sink = intake({ id: 'pune', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' }, [
      mqttDevice('gate-1'),
      mqttDevice('london-gate', { timezone: 'Europe/London' }),
      mqttDevice('ny-gate', { timezone: 'America/New_York' }),
    ])
    await sink.accept('gate-1', 'mqtt', frame('2026-11-21 09:00:00'))
    await sink.accept('london-gate', 'mqtt', frame('2026-11-21 09:00:00'))
    await sink.accept('ny-gate', 'mqtt', frame('2026-07-01 06:00:00'))
    await sink.accept('ny-gate', 'mqtt', frame('2026-11-21 06:00:00'))
    expect((await stored()).map((p) => `${p.deviceId} ${p.punchedAt}`)).toEqual([
      'gate-1 2026-11-21T09:00:00+05:30',
      'london-gate 2026-11-21T09:00:00Z',
      'ny-gate 2026-07-01T06:00:00-04:00',
      'ny-gate 2026-11-21T06:00:00-05:00',
    ])
  })

  it('writes an RFC 3339 time in the zone of the device it came from', async () => {
    const sink = intake({ id: 'pune', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' }, [
      mqttDevice('gate-1'),
      mqttDevice('dubai-gate', { timezone: 'Asia/Dubai' }),
    ])
    await sink.accept('gate-1', 'mqtt', frame('2026-11-21T03:30:00Z'))
    await sink.accept('dubai-gate', 'mqtt', frame('2026-11-21T03:30:00Z'))
    const [pune, dubai] = await stored()
    expect(pune?.punchedAt).toBe('2026-11-21T09:00:00+05:30')
    expect(dubai?.punchedAt).toBe('2026-11-21T07:30:00+04:00')
    // One instant, so the two devices' punches differ only by device in their ids.
    expect(parseTimestamp(pune?.punchedAt ?? '')).toBe(parseTimestamp(dubai?.punchedAt ?? ''))
  })

  it('reports how far the device clock is from the agent, on the punch just made', async () => {
    const spooled: AgentEvents['punchesSpooled'][] = []
    events.on('punchesSpooled', (e) => {
      spooled.push(e)
    })
    const sink = intake({ id: 'pune', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' }, [
      mqttDevice('gate-1'),
    ])
    // 17:29:18 in Pune is 42 seconds behind the agent's 17:30:00.
    await sink.accept('gate-1', 'mqtt', frame('2026-11-21 17:29:18'))
    // A device that sends no time has the agent's clock.
    await sink.accept('gate-1', 'mqtt', frame())
    // Ahead, within the five minutes allowed.
    await sink.accept('gate-1', 'mqtt', frame('2026-11-21T12:02:00Z'))
    expect(spooled.map((e) => e.skewSeconds)).toEqual([-42, 0, 120])
    expect(spooled[0]).toMatchObject({
      deviceId: 'gate-1',
      count: 1,
      lastPunchedAt: '2026-11-21T17:29:18+05:30',
    })
  })

  it('parks a punch from a device clock that was reset, in dead letters with the punch', async () => {
    const sink = intake({ id: 'pune', timezone: 'Asia/Kolkata', clockFloor: '2024-01-01T00:00:00Z' }, [
      mqttDevice('gate-1'),
    ])
    await sink.accept('gate-1', 'mqtt', frame('2000-01-01 00:03:00'))
    expect(await stored()).toEqual([])
    const [parked] = await allDeadLetters(deadLetters)
    expect(parked).toMatchObject({
      deviceId: 'gate-1',
      reason: 'device_clock_invalid',
      punch: { employeeCode: 'E001', punchType: 'IN', punchedAt: '2000-01-01T00:03:00+05:30' },
    })
  })
})
