import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { Forwarder } from '../../../agent/uplink/forwarder.js'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { PunchUplink } from '../../../agent/uplink/punch-uplink.js'
import { TokenClient } from '../../../agent/uplink/token-client.js'
import { employee, TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { FakeCloud, send } from '../../support/fake-cloud.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'

const log = pino({ level: 'silent' })
const FAST = { baseMs: 20, capMs: 200, floorMs: 10 }

function punch(i: number, code = `E${i % 5}`): SpooledPunch {
  const minute = String(i % 60).padStart(2, '0')
  const hour = String(6 + (Math.floor(i / 60) % 12)).padStart(2, '0')
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: code,
    punchType: i % 2 ? 'OUT' : 'IN',
    punchedAt: `2026-11-20T${hour}:${minute}:00+05:30`,
    receivedAt: '2026-11-20T03:30:00.000000Z',
  }
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('forwarding to a real cloud', () => {
  const cloud = new TestCloud('sqlite')
  let url: string
  let tenantId: string
  let clientId: string
  let clientSecret: string

  beforeAll(async () => {
    await cloud.start()
    url = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(
      tenantId,
      Array.from({ length: 5 }, (_, i) => employee(`E${i}`)),
    )
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'agent', scopes: ['attendance:write'], rateLimitPerMinute: 100_000 },
      TEST_ACTOR,
    )
    clientId = app.clientId
    clientSecret = app.clientSecret
  })
  afterAll(() => cloud.stop())

  let dir: string
  let stops: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const stop of stops.reverse()) await stop()
    stops = []
    await rm(dir, { recursive: true, force: true })
  })

  async function agent(
    cloudUrl = url,
    options: { batchSize?: number; secret?: string; dir?: string; chunkPunches?: number } = {},
  ) {
    dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'hajri-forward-')))
    const events = new EventBus(log)
    const spool = new Spool({
      dir,
      maxBytes: 1 << 30,
      chunkPunches: options.chunkPunches ?? 100,
      log,
      events,
    })
    const deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
    await spool.start()
    await deadLetters.open()
    const client = createHttpClient({ url: cloudUrl, timeoutSeconds: 5, concurrency: 2 })
    const tokens = new TokenClient({
      http: client.http,
      clientId,
      clientSecret: options.secret ?? clientSecret,
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
      batchSize: options.batchSize ?? 500,
      backoff: FAST,
    })
    const failures: { error: string; retryInMs: number }[] = []
    events.on('forwardFailed', (e) => {
      failures.push(e)
    })
    stops.push(async () => {
      await forwarder.stop()
      client.close()
    })
    return { spool, deadLetters, forwarder, failures, tokens }
  }

  /** Every punch of the tenant, page after page (the tests share the tenant). */
  const stored = async () => {
    const all = []
    let cursor: string | undefined
    do {
      const page = await cloud.services.punches.list(
        { id: tenantId, timeZone: 'Asia/Kolkata', backfillDays: 90 },
        { limit: 200, ...(cursor ? { cursor } : {}) },
      )
      all.push(...page.data)
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    return all
  }

  it('sends a backlog in batches, deletes the chunks, and stores every punch once', async () => {
    const { spool, forwarder } = await agent(url, { batchSize: 40 })
    const punches = Array.from({ length: 120 }, (_, i) => punch(i))
    await spool.append(punches)
    forwarder.start()
    await until(() => spool.stats().items === 0)
    const log = await stored()
    expect(new Set(log.map((p) => p.externalId))).toEqual(new Set(punches.map((p) => p.id)))
    expect(log.filter((p) => punches.some((q) => q.id === p.externalId))).toHaveLength(120)
  })

  it('parks punches the cloud refuses in dead letters, with its problem, and sends the rest', async () => {
    const { spool, deadLetters, forwarder } = await agent()
    await spool.append([punch(200), punch(201, 'NOBODY'), punch(202)])
    forwarder.start()
    await until(() => spool.stats().items === 0)
    const parked = await allDeadLetters(deadLetters)
    expect(parked).toHaveLength(1)
    expect(parked[0]).toMatchObject({
      reason: 'rejected_by_cloud',
      punch: { employeeCode: 'NOBODY' },
      problem: { code: 'employee_not_found', status: 422 },
    })
    expect((await stored()).map((p) => p.externalId)).toEqual(
      expect.arrayContaining([punch(200).id, punch(202).id]),
    )
  })

  it('sends many one-punch chunks in one batch request, dead-lettering only the punch refused', async () => {
    const counter = await countingRelay(url)
    stops.push(() => new Promise((resolve) => counter.server.close(() => resolve())))
    const { spool, deadLetters, forwarder } = await agent(counter.url, { chunkPunches: 1 })
    const punches = [punch(700), punch(701), punch(702, 'NOBODY'), punch(703), punch(704)]
    // One append each: five group commits, five chunk files, as devices at human pace leave them.
    for (const p of punches) await spool.append([p])
    expect(spool.stats().chunks).toBe(5)
    forwarder.start()
    await until(() => spool.stats().items === 0)
    expect(counter.paths.filter((path) => path.endsWith('/punches/batch'))).toHaveLength(1)
    expect(counter.paths.filter((path) => path.endsWith('/punches'))).toHaveLength(0)
    const parked = await allDeadLetters(deadLetters)
    expect(parked.map((d) => d.punch?.id)).toEqual([punch(702).id])
    const ids = (await stored()).map((p) => p.externalId)
    expect(ids).toEqual(expect.arrayContaining([700, 701, 703, 704].map((i) => punch(i).id)))
    expect(ids).not.toContain(punch(702).id)
  })

  it("sends a batch again after a crash between the cloud's answer and the deletion, storing each punch once", async () => {
    const first = await agent(url, { chunkPunches: 1 })
    const punches = Array.from({ length: 6 }, (_, i) => punch(800 + i))
    for (const p of punches) await first.spool.append([p])
    // The process "dies" after the cloud stored the batch and before the chunk files were deleted.
    const crash = new AbortController()
    let removalsStarted = 0
    first.spool.remove = () => {
      removalsStarted++
      return new Promise((_, reject) =>
        crash.signal.addEventListener('abort', () => reject(new Error('killed')), { once: true }),
      )
    }
    first.forwarder.start()
    await until(() => removalsStarted === 1)
    const inCloud = async () => (await stored()).filter((p) => punches.some((q) => q.id === p.externalId))
    expect(await inCloud()).toHaveLength(6)
    crash.abort()
    await first.forwarder.stop()
    // Every chunk file is still there: nothing is lost, and the next run sends them all again.
    const again = await agent(url, { chunkPunches: 1, dir })
    expect(again.spool.stats()).toMatchObject({ chunks: 6, items: 6 })
    again.forwarder.start()
    await until(() => again.spool.stats().items === 0)
    expect(await inCloud()).toHaveLength(6)
    expect(await allDeadLetters(again.deadLetters)).toEqual([])
  })

  it('keeps retrying while the cloud is down, and loses nothing', async () => {
    // The cloud is down (every request a 503), then comes back on the same address.
    const proxy = createServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '0' }).end()
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const port = (proxy.address() as { port: number }).port
    const { spool, forwarder, failures } = await agent(`http://127.0.0.1:${port}`)
    await spool.append([punch(300), punch(301)])
    forwarder.start()
    await until(() => failures.length >= 3)
    expect(spool.stats().items).toBe(2)
    await new Promise<void>((resolve) => proxy.close(() => resolve()))
    // The cloud comes back on the same address.
    const back = await relay(port, url)
    stops.push(() => new Promise((resolve) => back.close(() => resolve())))
    await until(() => spool.stats().items === 0)
    expect((await stored()).map((p) => p.externalId)).toEqual(
      expect.arrayContaining([punch(300).id, punch(301).id]),
    )
  })

  it('honours Retry-After on a 429', async () => {
    const limited = new FakeCloud()
    limited.punchAnswer = (_request, res) =>
      res
        .writeHead(429, { 'retry-after': '7', 'content-type': 'application/problem+json' })
        .end('{"code":"rate_limited"}')
    await limited.start()
    stops.push(() => limited.stop())
    const { spool, forwarder, failures } = await agent(limited.url)
    await spool.append([punch(400)])
    forwarder.start()
    await until(() => failures.length >= 1)
    expect(failures[0]?.retryInMs).toBeGreaterThanOrEqual(7000)
    expect(failures[0]?.error).toContain('429')
  })

  it('keeps the chunk when a 200 to a batch is not a batch answer, and sends it again', async () => {
    // Something between the agent and the cloud answers 200 with a body of its own: nothing in it
    // says what the cloud stored, so nothing may leave the spool.
    let answered = 0
    const impostor = new FakeCloud()
    impostor.punchAnswer = (_request, res) => {
      answered++
      send(res, 200, {
        results: [
          { index: 0, status: 'created' },
          { index: 1, status: 'created' },
        ],
      })
    }
    await impostor.start()
    stops.push(() => impostor.stop())
    const { spool, deadLetters, forwarder, failures } = await agent(impostor.url, { chunkPunches: 1 })
    await spool.append([punch(450)])
    await spool.append([punch(451)])
    forwarder.start()
    await until(() => failures.length >= 2)
    expect(answered).toBeGreaterThanOrEqual(2)
    expect(failures[0]?.error).toContain('the batch answer is malformed')
    expect(spool.stats()).toMatchObject({ items: 2, chunks: 2 })
    expect(await allDeadLetters(deadLetters)).toEqual([])
  })

  it('gets a new token once the cloud refuses the old one, and carries on', async () => {
    const { spool, forwarder, tokens } = await agent()
    const first = await tokens.token()
    await cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      payload: { token: first },
    })
    await spool.append([punch(500)])
    forwarder.start()
    await until(() => spool.stats().items === 0)
    expect(await tokens.token()).not.toBe(first)
  })

  it('keeps the punches when the client secret is wrong, retrying until it is fixed', async () => {
    const { spool, forwarder, failures } = await agent(url, { secret: 'hjs_wrong' })
    await spool.append([punch(600)])
    forwarder.start()
    await until(() => failures.length >= 2)
    expect(failures[0]?.error).toContain('invalid_client')
    expect(spool.stats().items).toBe(1)
  })
})

/** A TCP-level stand-in for "the cloud is back on this port": forwards to the real cloud. */
async function relay(port: number, target: string): Promise<Server> {
  const { request } = await import('node:http')
  const server = createServer((req, res) => {
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return server
}

/** A relay to the real cloud that notes the path of every request. */
async function countingRelay(target: string): Promise<{ server: Server; url: string; paths: string[] }> {
  const { request } = await import('node:http')
  const paths: string[] = []
  const server = createServer((req, res) => {
    paths.push(req.url ?? '')
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, paths }
}
