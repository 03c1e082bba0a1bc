import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { agentVersion } from '../../../agent/agent-version.js'
import { EventBus } from '../../../agent/events.js'
import { InvalidCursorError } from '../../../agent/spool/dead-letters.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { createMetrics } from '../../../agent/status/metrics.js'
import { type DeadLetterQuery, parseListen, StatusServer } from '../../../agent/status/status-server.js'

const log = pino({ level: 'silent' })

function status(alarms: string[] = []): AgentStatus {
  return {
    agent: { site: 'pune', pid: 1, startedAt: '2026-11-21T04:00:00.000Z', uptimeSeconds: 5 },
    spool: {
      punches: 0,
      chunks: 0,
      bytes: 0,
      maxBytes: 100,
      oldestUnsentAt: null,
      oldestUnsentAgeSeconds: null,
      full: false,
      fullSince: null,
      quarantinedChunks: 0,
    },
    deadLetters: { count: 0 },
    devices: [],
    unknownDevices: [],
    forwarding: { forwarded: 0, ratePerSecond: 0, lastSuccessAt: null, lastError: null, backlog: null },
    alarms,
  }
}

/** Whether anything accepts TCP connections at `address` (http://host:port). */
function listening(address: string): Promise<boolean> {
  const { hostname, port } = new URL(address)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

let server: StatusServer | undefined
let dir: string | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

async function start(overrides: { alarms?: string[] } = {}) {
  const events = new EventBus(log)
  const replays: { reason?: string; deviceId?: string }[] = []
  const listings: DeadLetterQuery[] = []
  dir = await mkdtemp(join(tmpdir(), 'hajri-status-'))
  const tokenFile = join(dir, 'control-token')
  server = new StatusServer({
    listen: '127.0.0.1:0',
    tokenFile,
    log,
    status: () => status(overrides.alarms),
    metrics: createMetrics(events, () => ({
      spoolPunches: 3,
      spoolBytes: 10,
      deadLetters: 1,
      spoolFull: false,
      devices: [],
      unknownDevices: 0,
    })),
    listDeadLetters: async (query) => {
      listings.push(query)
      if (query.cursor === 'not-ours') throw new InvalidCursorError()
      return { data: [{ id: 'dlt_1' }], nextCursor: 'next' }
    },
    replayDeadLetters: async (filter) => {
      replays.push(filter)
      return { replayed: 2, kept: 1 }
    },
    backfill: async () => {
      throw new Error('not asked')
    },
    setTime: async () => {
      throw new Error('not asked')
    },
    clearLog: async () => {
      throw new Error('not asked')
    },
  })
  await server.start()
  const base = server.address ?? ''
  const token = (await readFile(tokenFile, 'utf8')).trim()
  return { base, replays, listings, events, token }
}

describe('parseListen', () => {
  it('splits host and port, IPv6 in brackets included', () => {
    expect(parseListen('127.0.0.1:9410')).toEqual({ host: '127.0.0.1', port: 9410 })
    expect(parseListen('localhost:80')).toEqual({ host: 'localhost', port: 80 })
    expect(parseListen('[::1]:9410')).toEqual({ host: '::1', port: 9410 })
  })
})

describe('the status listener', () => {
  it('listens on the address asked for, loopback only, and reports where', async () => {
    const { base } = await start()
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await listening(base)).toBe(true)
  })

  it('serves the status JSON at GET /status', async () => {
    const { base } = await start({ alarms: ['spool full'] })
    const response = await fetch(`${base}/status`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const served = status(['spool full'])
    // With the version of the code serving it (agent-version.ts).
    expect(await response.json()).toEqual({ ...served, agent: { ...served.agent, version: agentVersion() } })
  })

  it('answers /healthz with ok and the alarms: alive even when something needs attention', async () => {
    const { base } = await start({ alarms: ['cloud unreachable: x'] })
    const response = await fetch(`${base}/healthz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: 'ok', alarms: ['cloud unreachable: x'] })
  })

  it('serves Prometheus text at /metrics', async () => {
    const { base, events } = await start()
    events.emit('punchesForwarded', { count: 9 })
    const response = await fetch(`${base}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    expect(text).toContain('\nhajri_agent_punches_forwarded_total 9\n')
    expect(text).toContain('\nhajri_agent_spool_punches 3\n')
  })

  it('lists dead letters at GET /dead-letters, a page at a time, passing on the paging and filter', async () => {
    const { base, listings } = await start()
    expect(await (await fetch(`${base}/dead-letters`)).json()).toEqual({
      data: [{ id: 'dlt_1' }],
      nextCursor: 'next',
    })
    const page = await fetch(
      `${base}/dead-letters?limit=200&cursor=next&reason=malformed_frame&deviceId=gate-1`,
    )
    expect(page.status).toBe(200)
    expect(listings).toEqual([
      {},
      { limit: 200, cursor: 'next', reason: 'malformed_frame', deviceId: 'gate-1' },
    ])
  })

  it('refuses a page size outside 1..200 and a cursor it did not give out, with 400', async () => {
    const { base, listings } = await start()
    for (const limit of ['0', '201', 'many'])
      expect((await fetch(`${base}/dead-letters?limit=${limit}`)).status).toBe(400)
    expect(listings).toEqual([])
    const foreign = await fetch(`${base}/dead-letters?cursor=not-ours`)
    expect(foreign.status).toBe(400)
    expect(await foreign.json()).toMatchObject({ code: 'invalid_cursor' })
  })

  it('replays dead letters on POST /dead-letters/replay, passing on the filter and nothing else', async () => {
    const { base, replays, token } = await start()
    const post = (body: string | undefined, type?: string) =>
      fetch(`${base}/dead-letters/replay`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) },
        ...(body !== undefined ? { body } : {}),
      })
    const answer = await post(
      JSON.stringify({ reason: 'rejected_by_cloud', deviceId: 'gate-1' }),
      'application/json',
    )
    expect(await answer.json()).toEqual({ replayed: 2, kept: 1 })
    await post('{}', 'application/json')
    // Anything but text is no filter at all: it must not become a filter matching nothing, or everything.
    await post(JSON.stringify({ reason: 7, deviceId: ['gate-1'], extra: 'x' }), 'application/json')
    // A change takes a JSON body and nothing else (no HTML form can send one).
    expect((await post(undefined)).status).toBe(415)
    expect(replays).toEqual([{ reason: 'rejected_by_cloud', deviceId: 'gate-1' }, {}, {}])
  })

  it('answers 404 for anything else', async () => {
    const { base } = await start()
    expect((await fetch(`${base}/`)).status).toBe(404)
    expect((await fetch(`${base}/dead-letters/replay`)).status).toBe(404)
  })

  it('closes its port on stop', async () => {
    const { base } = await start()
    await server?.stop()
    server = undefined
    expect(await listening(base)).toBe(false)
  })
})
