import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import { createMetrics, type MetricsSnapshot } from '../../../agent/status/metrics.js'
import type { DeviceStatus } from '../../../agent/status/status-tracker.js'

const log = pino({ level: 'silent' })

/** `name{labels}` → value, from the Prometheus text format. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** A device's status with the figures a gauge reads; the rest as a fresh device has them. */
function device(id: string, up: boolean, more: Partial<DeviceStatus> = {}): DeviceStatus {
  return {
    id,
    transports: ['mqtt'],
    state: up ? 'connected' : 'disconnected',
    detail: null,
    stateSince: null,
    punches: 0,
    resends: 0,
    malformedFrames: 0,
    lastPunchAt: null,
    lastPunchedAt: null,
    clockSkewSeconds: null,
    ...more,
  }
}

function world() {
  const events = new EventBus(log)
  const state: MetricsSnapshot = {
    spoolPunches: 0,
    spoolBytes: 0,
    deadLetters: 0,
    spoolFull: false,
    devices: [device('gate-1', false), device('main-door', true)],
    unknownDevices: 0,
  }
  const registry = createMetrics(events, () => state)
  return { events, state, registry, read: async () => samples(await registry.metrics()) }
}

describe('agent metrics', () => {
  it('counts punches spooled and frames malformed per device', async () => {
    const { events, read } = world()
    events.emit('punchesSpooled', { deviceId: 'gate-1', count: 3, lastPunchedAt: 'x', skewSeconds: 0 })
    events.emit('punchesSpooled', { deviceId: 'gate-1', count: 2, lastPunchedAt: 'x', skewSeconds: 0 })
    events.emit('punchesSpooled', { deviceId: 'main-door', count: 1, lastPunchedAt: 'x', skewSeconds: 0 })
    events.emit('frameMalformed', { deviceId: 'main-door', error: 'bad' })
    const m = await read()
    expect(m.get('hajri_agent_punches_spooled_total{device="gate-1"}')).toBe(5)
    expect(m.get('hajri_agent_punches_spooled_total{device="main-door"}')).toBe(1)
    expect(m.get('hajri_agent_frames_malformed_total{device="main-door"}')).toBe(1)
  })

  it('counts dead letters by reason, forwards, and failed requests', async () => {
    const { events, read } = world()
    events.emit('deadLettered', { deviceId: 'gate-1', reason: 'rejected_by_cloud', count: 2 })
    events.emit('deadLettered', { deviceId: 'gate-1', reason: 'device_clock_invalid', count: 1 })
    events.emit('punchesForwarded', { count: 500 })
    events.emit('punchesForwarded', { count: 20 })
    events.emit('forwardFailed', { error: 'x', retryInMs: 1 })
    events.emit('forwardFailed', { error: 'y', retryInMs: 1 })
    events.emit('forwardFailed', { error: 'z', retryInMs: 1 })
    const m = await read()
    expect(m.get('hajri_agent_dead_letters_added_total{reason="rejected_by_cloud"}')).toBe(2)
    expect(m.get('hajri_agent_dead_letters_added_total{reason="device_clock_invalid"}')).toBe(1)
    expect(m.get('hajri_agent_punches_forwarded_total')).toBe(520)
    expect(m.get('hajri_agent_forward_failures_total')).toBe(3)
  })

  it('reads the gauges at each scrape', async () => {
    const { state, read } = world()
    let m = await read()
    expect(m.get('hajri_agent_spool_punches')).toBe(0)
    expect(m.get('hajri_agent_spool_full')).toBe(0)
    expect(m.get('hajri_agent_device_up{device="gate-1"}')).toBe(0)
    expect(m.get('hajri_agent_device_up{device="main-door"}')).toBe(1)
    Object.assign(state, {
      spoolPunches: 1234,
      spoolBytes: 567_890,
      deadLetters: 7,
      spoolFull: true,
      devices: [device('gate-1', true), device('main-door', false)],
    })
    m = await read()
    expect(m.get('hajri_agent_spool_punches')).toBe(1234)
    expect(m.get('hajri_agent_spool_bytes')).toBe(567_890)
    expect(m.get('hajri_agent_dead_letters')).toBe(7)
    expect(m.get('hajri_agent_spool_full')).toBe(1)
    expect(m.get('hajri_agent_device_up{device="gate-1"}')).toBe(1)
    expect(m.get('hajri_agent_device_up{device="main-door"}')).toBe(0)
  })

  it("includes the process's own metrics under the agent's prefix", async () => {
    const { read } = world()
    const names = [...(await read()).keys()]
    expect(names).toContain('hajri_agent_process_resident_memory_bytes')
    expect(names).toContain('hajri_agent_process_cpu_seconds_total')
    // Nothing under another prefix: the agent's registry is its own.
    expect(names.filter((n) => !n.startsWith('hajri_agent_'))).toEqual([])
  })

  it('keeps each agent in a registry of its own: two can live in one process', async () => {
    const a = world()
    const b = world()
    a.events.emit('punchesForwarded', { count: 4 })
    expect((await a.read()).get('hajri_agent_punches_forwarded_total')).toBe(4)
    expect((await b.read()).get('hajri_agent_punches_forwarded_total')).toBe(0)
  })

  it('writes the Prometheus text format with HELP and TYPE for each metric', async () => {
    const { registry } = world()
    const text = await registry.metrics()
    expect(registry.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(text).toContain('# TYPE hajri_agent_punches_forwarded_total counter')
    expect(text).toContain('# HELP hajri_agent_punches_forwarded_total Punches the cloud accepted.')
    expect(text).toContain('# TYPE hajri_agent_spool_punches gauge')
  })
})
