import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { Forwarder } from '../../../agent/uplink/forwarder.js'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { PunchUplink } from '../../../agent/uplink/punch-uplink.js'
import { TokenClient } from '../../../agent/uplink/token-client.js'
import { batchAnswer } from '../../support/batch-answer.js'
import { send } from '../../support/fake-cloud.js'

/** A backoff far longer than any test may wait: only the health probe can end it in time. */
const HUGE = { baseMs: 600_000, capMs: 600_000, floorMs: 600_000 }
/** The probe's pace in these tests: fast, so the tests are quick (the pace is not what they check). */
const PROBE_MS = 20

function punch(i: number): SpooledPunch {
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: `E${i}`,
    punchType: 'IN',
    punchedAt: `2026-11-20T09:${String(i % 60).padStart(2, '0')}:00+05:30`,
    receivedAt: '2026-11-20T03:30:00.000000Z',
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10))
}

interface Seen {
  path: string
  status: number
  /** For a punch request: the externalIds it carried. */
  ids: string[]
}

type Mode = 'up' | 'down' | 'hang'

/**
 * A cloud on a real socket: `up` answers tokens, /healthz and punches as the cloud does; `down`
 * answers everything 502, as the proxy in front of a stopped cloud does (docs/decisions/0060-caddy-and-tini.md);
 * `hang` never answers /healthz. `close()`/`reopen()` stop listening, for a cloud that refuses connections.
 */
class FlakyCloud {
  mode: Mode = 'up'
  /** Punch ids answered 503 with Retry-After: 600 whatever the mode. */
  readonly busyIds = new Set<string>()
  readonly seen: Seen[] = []
  healthzInFlight = 0
  maxHealthzInFlight = 0
  heldClosed = 0
  url = ''
  private port = 0
  private readonly server: Server = createServer((req, res) => this.answer(req, res))

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    this.url = `http://127.0.0.1:${this.port}`
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  healthz(status?: number): Seen[] {
    return this.seen.filter((s) => s.path === '/healthz' && (status === undefined || s.status === status))
  }

  punches(status?: number): Seen[] {
    return this.seen.filter(
      (s) => s.path.startsWith('/api/public') && (status === undefined || s.status === status),
    )
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? ''
      const body = Buffer.concat(chunks).toString('utf8')
      let json: { punches?: { externalId: string }[]; externalId?: string } = {}
      try {
        json = JSON.parse(body)
      } catch {
        // The token request's body is a form.
      }
      const ids = json.punches?.map((p) => p.externalId) ?? (json.externalId ? [json.externalId] : [])
      const reply = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
        this.seen.push({ path, status, ids })
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
        send(res, status, answer)
      }
      if (path === '/healthz') {
        if (req.headers.authorization) throw new Error('the probe must not send a token')
        if (this.mode === 'hang') {
          this.seen.push({ path, status: 0, ids })
          this.healthzInFlight++
          this.maxHealthzInFlight = Math.max(this.maxHealthzInFlight, this.healthzInFlight)
          res.on('close', () => {
            this.healthzInFlight--
            this.heldClosed++
          })
          return
        }
        this.healthzInFlight++
        this.maxHealthzInFlight = Math.max(this.maxHealthzInFlight, this.healthzInFlight)
        res.on('close', () => this.healthzInFlight--)
        return this.mode === 'up' ? reply(200, { status: 'ok' }) : reply(502, { title: 'Bad Gateway' })
      }
      if (ids.some((id) => this.busyIds.has(id)))
        return reply(503, { status: 503, code: 'busy' }, { 'retry-after': '600' })
      if (this.mode !== 'up') return reply(502, { title: 'Bad Gateway' })
      if (path === '/api/oauth/token')
        return reply(200, { access_token: 'tok', token_type: 'Bearer', expires_in: 3600 })
      if (json.punches) return reply(200, batchAnswer(ids.map((_, index) => ({ index, status: 'created' }))))
      return reply(201, {})
    })
  }
}

describe('the forwarder probes the cloud while it backs off', () => {
  let cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
    cleanups = []
  })

  async function agent(cloud: FlakyCloud, options: { batchSize?: number; log?: pino.Logger } = {}) {
    const log = options.log ?? pino({ level: 'silent' })
    const dir = await mkdtemp(join(tmpdir(), 'hajri-recovery-'))
    const events = new EventBus(log)
    const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches: 100, log, events })
    const deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
    await spool.start()
    await deadLetters.open()
    const client = createHttpClient({ url: cloud.url, timeoutSeconds: 5, concurrency: 2 })
    const tokens = new TokenClient({
      http: client.http,
      clientId: 'hjc_agent',
      clientSecret: 'hjs_secret',
      scope: 'attendance:write',
      log,
    })
    const forwarder = new Forwarder({
      spool,
      deadLetters,
      uplink: new PunchUplink({ http: client.http, tokens }),
      events,
      log,
      concurrency: 2,
      batchSize: options.batchSize ?? 100,
      backoff: HUGE,
      probeIntervalMs: PROBE_MS,
    })
    const failures: { error: string; retryInMs: number }[] = []
    events.on('forwardFailed', (e) => {
      failures.push(e)
    })
    cleanups.push(async () => {
      await forwarder.stop()
      client.close()
      await spool.stop()
      await rm(dir, { recursive: true, force: true })
    })
    forwarder.start()
    return { spool, forwarder, failures }
  }

  it('sends the batch once /healthz answers again, without waiting out a 10-minute backoff', async () => {
    const cloud = new FlakyCloud()
    await cloud.start()
    cleanups.push(() => cloud.close())
    cloud.mode = 'down'
    const { spool, failures } = await agent(cloud)
    await spool.append([punch(1), punch(2)])
    await until(() => failures.length >= 1 && cloud.healthz(502).length >= 1)
    expect(failures[0]?.retryInMs).toBeGreaterThanOrEqual(HUGE.floorMs)
    cloud.mode = 'up'
    // Only the probe can end the wait before the test's own timeout.
    await until(() => spool.stats().items === 0)
    const firstHealthy = cloud.seen.findIndex((s) => s.path === '/healthz' && s.status === 200)
    const accepted = cloud.seen.findIndex((s) => s.path.startsWith('/api/public') && s.status === 200)
    expect(firstHealthy).toBeGreaterThanOrEqual(0)
    expect(accepted).toBeGreaterThan(firstHealthy)
    expect(cloud.seen[accepted]?.ids).toEqual([punch(1).id, punch(2).id])
    expect(cloud.maxHealthzInFlight).toBe(1)
  })

  it('resumes when a cloud that refused connections listens again', async () => {
    const cloud = new FlakyCloud()
    await cloud.start()
    const lines: string[] = []
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) })
    const { spool, failures } = await agent(cloud, { log })
    await cloud.close()
    await spool.append([punch(3)])
    // The punch was refused a connection, and so was a probe after it.
    await until(() => failures.length >= 1 && lines.some((l) => l.includes('the cloud does not answer yet')))
    expect(failures[0]?.error).toMatch(/did not answer|token request failed/)
    await cloud.start()
    cleanups.push(() => cloud.close())
    await until(() => spool.stats().items === 0)
    expect(cloud.punches(201).map((s) => s.ids)).toEqual([[punch(3).id]])
    expect(lines.some((l) => l.includes('the cloud answers again'))).toBe(true)
  })

  it('does not cut short a wait the cloud asked for with Retry-After', async () => {
    const cloud = new FlakyCloud()
    await cloud.start()
    cleanups.push(() => cloud.close())
    cloud.busyIds.add(punch(10).id)
    const { spool, failures } = await agent(cloud, { batchSize: 1 })
    await spool.append([punch(10)])
    await until(() => failures.length >= 1)
    // A second punch meets an outage, so the probe runs, fails, and then sees the cloud again.
    cloud.mode = 'down'
    await spool.append([punch(11)])
    await until(() => failures.length >= 2 && cloud.healthz(502).length >= 1)
    cloud.mode = 'up'
    // Punch 11 is accepted and its chunk deleted; punch 10 stays, waiting its 10 minutes.
    await until(() => spool.stats().items === 1)
    expect(cloud.punches(201).map((s) => s.ids)).toEqual([[punch(11).id]])
    expect(cloud.healthz(200).length).toBeGreaterThanOrEqual(1)
    // The probe saw the cloud answer, and still the punch the cloud asked us to hold was not resent.
    expect(cloud.punches().filter((s) => s.ids.includes(punch(10).id))).toHaveLength(1)
    expect(failures[0]?.retryInMs).toBeGreaterThanOrEqual(600_000)
  })

  it('stop() ends the probing, and abandons the probe request in flight', async () => {
    const cloud = new FlakyCloud()
    await cloud.start()
    cleanups.push(() => cloud.close())
    cloud.mode = 'down'
    const { spool, forwarder } = await agent(cloud)
    await spool.append([punch(20)])
    await until(() => cloud.healthz(502).length >= 1)
    cloud.mode = 'hang'
    await until(() => cloud.healthzInFlight === 1)
    await forwarder.stop()
    await until(() => cloud.heldClosed === 1)
    expect(cloud.healthzInFlight).toBe(0)
    expect(cloud.healthz(0)).toHaveLength(1)
    // The punch stays in the spool for the next start.
    expect(spool.stats().items).toBe(1)
  })
})
