import pino from 'pino'
import { beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import { StatusTracker } from '../../../agent/status/status-tracker.js'

const log = pino({ level: 'silent' })

let clock: number
let events: EventBus
let tracker: StatusTracker

beforeEach(() => {
  // The tracker's start is the real clock's: this clock starts there and is moved by hand.
  clock = Date.now()
  events = new EventBus(log)
  tracker = new StatusTracker(
    [
      { id: 'gate-1', transports: ['mqtt'] },
      { id: 'main-door', transports: ['serial'] },
    ],
    () => clock,
  )
  tracker.follow(events)
})

const device = (id: string) => tracker.deviceStatuses().find((d) => d.id === id)
const iso = (ms: number) => new Date(ms).toISOString()

describe('devices', () => {
  it('starts every configured device unknown, unheard', () => {
    expect(tracker.deviceStatuses()).toEqual([
      {
        id: 'gate-1',
        transports: ['mqtt'],
        state: 'unknown',
        detail: null,
        stateSince: null,
        punches: 0,
        resends: 0,
        malformedFrames: 0,
        lastPunchAt: null,
        lastPunchedAt: null,
        clockSkewSeconds: null,
      },
      expect.objectContaining({ id: 'main-door', transports: ['serial'], state: 'unknown' }),
    ])
  })

  it('counts punches a device sent again, per device', () => {
    events.emit('punchesResent', { deviceId: 'gate-1', count: 3 })
    events.emit('punchesResent', { deviceId: 'gate-1', count: 2 })
    events.emit('punchesResent', { deviceId: 'nobody', count: 7 })
    expect(device('gate-1')?.resends).toBe(5)
    expect(device('main-door')?.resends).toBe(0)
  })

  it('follows state changes, dating each from when it changed', () => {
    const opened = clock
    events.emit('deviceState', { deviceId: 'main-door', state: 'connected' })
    clock += 5000
    // The same state again (a reconnect that was never seen to drop) keeps its first date.
    events.emit('deviceState', { deviceId: 'main-door', state: 'connected' })
    expect(device('main-door')).toMatchObject({ state: 'connected', stateSince: iso(opened), detail: null })
    clock += 5000
    events.emit('deviceState', { deviceId: 'main-door', state: 'waiting', detail: 'ENOENT /dev/ttyUSB0' })
    expect(device('main-door')).toMatchObject({
      state: 'waiting',
      stateSince: iso(clock),
      detail: 'ENOENT /dev/ttyUSB0',
    })
    // A detail belongs to its state: it goes when the state comes back.
    events.emit('deviceState', { deviceId: 'main-door', state: 'connected' })
    expect(device('main-door')?.detail).toBeNull()
  })

  it('counts punches and keeps the last one, with the clock skew it came with', () => {
    events.emit('punchesSpooled', {
      deviceId: 'gate-1',
      count: 3,
      lastPunchedAt: '2026-11-21T09:00:00+05:30',
      skewSeconds: -42,
    })
    const first = clock
    clock += 1000
    events.emit('punchesSpooled', {
      deviceId: 'gate-1',
      count: 2,
      lastPunchedAt: '2026-11-21T09:00:01+05:30',
      skewSeconds: 3,
    })
    expect(device('gate-1')).toMatchObject({
      punches: 5,
      lastPunchAt: iso(first + 1000),
      lastPunchedAt: '2026-11-21T09:00:01+05:30',
      clockSkewSeconds: 3,
    })
    expect(device('main-door')?.punches).toBe(0)
  })

  it('estimates the clock skew from recent frames, so a backlog does not swing it', () => {
    const frame = (skewSeconds: number) =>
      events.emit('punchesSpooled', { deviceId: 'gate-1', count: 1, lastPunchedAt: 'x', skewSeconds })
    // A clock 90 s behind: every live punch says so.
    frame(-90)
    frame(-91)
    expect(device('gate-1')?.clockSkewSeconds).toBe(-90)
    // The terminal uploads a backlog of punches made hours ago: still 90 s behind, not hours.
    frame(-7200)
    expect(device('gate-1')?.clockSkewSeconds).toBe(-90)
    // The clock is set right; once the old samples are gone, the estimate follows.
    for (let i = 0; i < 16; i++) frame(1)
    expect(device('gate-1')?.clockSkewSeconds).toBe(1)
  })

  it('counts malformed frames per device', () => {
    events.emit('frameMalformed', { deviceId: 'main-door', error: 'x' })
    events.emit('frameMalformed', { deviceId: 'main-door', error: 'y' })
    expect(device('main-door')?.malformedFrames).toBe(2)
    expect(device('gate-1')?.malformedFrames).toBe(0)
  })

  it('ignores devices it was not told about', () => {
    events.emit('deviceState', { deviceId: 'ghost', state: 'connected' })
    events.emit('punchesSpooled', { deviceId: 'ghost', count: 1, lastPunchedAt: 'x', skewSeconds: 0 })
    events.emit('frameMalformed', { deviceId: 'ghost', error: 'x' })
    expect(tracker.deviceStatuses().map((d) => d.id)).toEqual(['gate-1', 'main-door'])
  })
})

describe('forwarding', () => {
  it('starts with nothing forwarded and no error', () => {
    expect(tracker.forwardingStatus()).toEqual({
      forwarded: 0,
      ratePerSecond: 0,
      lastSuccessAt: null,
      lastError: null,
    })
  })

  it('reports the rate over the last minute, forgetting older forwards', () => {
    // Two minutes in, so the window is the whole minute.
    clock += 120_000
    events.emit('punchesForwarded', { count: 6000 })
    clock += 30_000
    events.emit('punchesForwarded', { count: 600 })
    events.emit('punchesForwarded', { count: 300 })
    // 6900 in the last 60 s.
    expect(tracker.forwardingStatus().ratePerSecond).toBe(115)
    clock += 30_001
    // The 6000 are more than a minute old now: 900 in 60 s.
    expect(tracker.forwardingStatus()).toMatchObject({ forwarded: 6900, ratePerSecond: 15 })
    clock += 60_000
    expect(tracker.forwardingStatus()).toMatchObject({ forwarded: 6900, ratePerSecond: 0 })
  })

  it('keeps a minute of forwards however long nobody reads the status', () => {
    // A month of batches, one a minute, and no status read: what is remembered is the last minute.
    for (let i = 0; i < 30 * 24 * 60; i++) {
      clock += 60_001
      events.emit('punchesForwarded', { count: 1 })
    }
    const recent = (tracker as unknown as { recent: unknown[] }).recent
    expect(recent).toHaveLength(1)
    expect(tracker.forwardingStatus()).toMatchObject({ forwarded: 30 * 24 * 60 })
  })

  it('measures an agent younger than a minute over its own age, not a full minute', () => {
    // 10 s after the start, 100 punches: 10 a second, not 100/60.
    const started = new Date(tracker.startedAt).getTime()
    clock = started + 10_000
    events.emit('punchesForwarded', { count: 100 })
    expect(tracker.forwardingStatus().ratePerSecond).toBe(10)
  })

  it('dates the last success, and keeps the last error with its retry', () => {
    events.emit('punchesForwarded', { count: 1 })
    const success = clock
    clock += 1000
    events.emit('forwardFailed', { error: 'the cloud answered 503', retryInMs: 750 })
    clock += 1000
    events.emit('forwardFailed', { error: 'the cloud did not answer: ECONNREFUSED', retryInMs: 1500 })
    expect(tracker.forwardingStatus()).toMatchObject({
      lastSuccessAt: iso(success),
      lastError: { at: iso(clock), message: 'the cloud did not answer: ECONNREFUSED', retryInMs: 1500 },
    })
  })
})

describe('following and stopping', () => {
  it('dates a full spool from the first refusal', () => {
    events.emit('spoolFull', { bytes: 10, maxBytes: 10 })
    const first = clock
    clock += 5000
    events.emit('spoolFull', { bytes: 10, maxBytes: 10 })
    expect(tracker.spoolFullSince).toBe(iso(first))
  })

  it('forgets the date once the spool has room, so the next refusal is dated afresh', () => {
    events.emit('spoolFull', { bytes: 10, maxBytes: 10 })
    clock += 5000
    events.emit('spoolHasRoom', { bytes: 5, maxBytes: 10 })
    expect(tracker.spoolFullSince).toBeNull()
    clock += 5000
    events.emit('spoolFull', { bytes: 10, maxBytes: 10 })
    expect(tracker.spoolFullSince).toBe(iso(clock))
  })

  it('stops following the bus when stopped', () => {
    tracker.stop()
    events.emit('punchesForwarded', { count: 5 })
    events.emit('deviceState', { deviceId: 'gate-1', state: 'connected' })
    events.emit('spoolFull', { bytes: 10, maxBytes: 10 })
    expect(tracker.forwardingStatus().forwarded).toBe(0)
    expect(device('gate-1')?.state).toBe('unknown')
    expect(tracker.spoolFullSince).toBeNull()
  })
})
