import { rm } from 'node:fs/promises'
import http from 'node:http'
import { join } from 'node:path'
import { MAX_BATCH_PUNCHES } from '../../shared/punch.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { createPunchGenerator } from './punch-generator.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { ServerProcess } from './server-process.js'
import { createWebhookBenchDatabase, type WebhookBenchTenant } from './webhook-bench-database.js'
import { WebhookBenchProbe } from './webhook-bench-probe.js'
import { dialectName, readWebhookBenchSettings } from './webhook-bench-settings.js'
import { expectJson, request } from './webhook-http.js'
import { loadAverageNow, loadNote } from './webhook-load-note.js'
import { postSignedWebhooks, type SignedPostClient } from './webhook-signed-posts.js'

const EMPLOYEES = 500
/** A run that receives nothing new for this long is stuck, not slow. */
const STALL_MS = 30_000
const POLL_MS = 50

interface Scenario {
  /** Tenant name and receiver path segment. */
  name: string
  endpoints: number
  /** Events in each round's backlog; each goes to every endpoint. */
  events: number
}

interface Run {
  deliveries: number
  seconds: number
  /** From the start (the resume, or the first POST) to the first arrival at the receiver. */
  firstArrivalMs: number
}

interface Check {
  count: number
  verified: number
  distinct: number
  duplicates: number
  outOfOrder: number
}

/** What delivers a round: the cloud's dispatcher, or one of the baselines' clients. */
type Side = 'dispatcher' | SignedPostClient

const CLIENTS: readonly SignedPostClient[] = ['node-http', 'webhook-sender']

/** Receiver path prefix per baseline client, so their requests are counted apart from the dispatcher's. */
const PREFIXES: Record<SignedPostClient, string> = { 'node-http': '/base/', 'webhook-sender': '/sender/' }

type ScenarioRuns = Record<Side, Run[]> & { checks: Check[] }

const perSecond = (run: Run) => run.deliveries / run.seconds

/** Deliveries a second over several runs: all deliveries over all their time. */
const rate = (runs: readonly Run[]) =>
  runs.reduce((a, r) => a + r.deliveries, 0) / runs.reduce((a, r) => a + r.seconds, 0)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function run(context: BenchContext): Promise<BenchResult> {
  const { settings, log } = context
  const startedAt = new Date()
  const loadBefore = loadAverageNow()
  const { dialect, postgresUrl, backlogEvents: size, webhooks } = readWebhookBenchSettings()
  // One result file per database, so that a PostgreSQL run does not overwrite the SQLite figures.
  const name = dialect === 'sqlite' ? 'webhook-delivery' : `webhook-delivery-${dialect}`
  const scenarios: Scenario[] = [
    { name: 'one', endpoints: 1, events: size },
    { name: 'many', endpoints: 16, events: Math.max(MAX_BATCH_PUNCHES, Math.round(size / 5)) },
  ]
  const profileName = `${name}-server`
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })

  const problems: string[] = []
  const notes: string[] = []
  const runs = new Map<string, ScenarioRuns>()
  const receiver = await ServerProcess.start({ entry: 'webhook-receiver-server.ts' })
  const agent = new http.Agent({ keepAlive: true })
  try {
    const database = await createWebhookBenchDatabase({
      dialect,
      postgresUrl,
      receiverUrl: receiver.url,
      employees: EMPLOYEES,
      layouts: scenarios.map((s) => ({ name: s.name, endpoints: s.endpoints, paused: true })),
    })
    try {
      const probe = new WebhookBenchProbe(database)
      const cloud = await ServerProcess.start({
        entry: 'webhook-cloud-server.ts',
        args: [
          database.url,
          database.secretKey,
          String(webhooks.concurrency),
          String(webhooks.endpointConcurrency),
          String(webhooks.tenantConcurrency),
        ],
        profileDirectory,
      }).catch(async (err: unknown) => {
        await probe.close()
        throw err
      })
      try {
        const nextPunch = createPunchGenerator(database.employeeCodes)
        const receiverGet = async <T>(path: string) =>
          (await expectJson<T>(request(agent, 'GET', `${receiver.url}${path}`), 200, path)) as T
        const receiverPost = async <T>(path: string, body: unknown = {}) =>
          (await expectJson<T>(
            request(
              agent,
              'POST',
              `${receiver.url}${path}`,
              { 'content-type': 'application/json' },
              JSON.stringify(body),
            ),
            200,
            path,
          )) as T

        /** Every endpoint of the tenant paused or resumed, through the console API. */
        const setEndpoints = (tenant: WebhookBenchTenant, verb: 'pause' | 'resume') =>
          Promise.all(
            tenant.endpoints.map((e) =>
              expectJson(
                request(agent, 'POST', `${cloud.url}/api/console/v1/webhooks/${e.id}/${verb}`, {
                  authorization: `Bearer ${tenant.adminToken}`,
                }),
                200,
                `${verb} ${e.id}`,
              ),
            ),
          )

        /**
         * A backlog: `events` punches through the batch endpoint while the endpoints are paused,
         * then waits until the dispatcher has fanned every one out; returns the events' ids and bodies.
         */
        /** Per tenant, the newest punch event a backlog has returned. */
        const lastEventIds = new Map<string, string>()
        const backlog = async (scenario: Scenario, events: number) => {
          const tenant = database.tenants[scenario.name] as WebhookBenchTenant
          const before = (await probe.statusCounts(tenant.tenantId)).pending ?? 0
          for (let sent = 0; sent < events; sent += MAX_BATCH_PUNCHES) {
            const punches = Array.from({ length: Math.min(MAX_BATCH_PUNCHES, events - sent) }, nextPunch)
            const answer = await expectJson<{ summary: { created: number } }>(
              request(
                agent,
                'POST',
                `${cloud.url}/api/public/v1/attendance/punches/batch`,
                { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
                JSON.stringify({ punches }),
              ),
              200,
              'batch ingest',
            )
            if (answer?.summary.created !== punches.length)
              throw new Error(`batch created ${answer?.summary.created} of ${punches.length} punches`)
          }
          const expected = before + events * scenario.endpoints
          const waitUntil = Date.now() + STALL_MS
          while (((await probe.statusCounts(tenant.tenantId)).pending ?? 0) < expected) {
            if (Date.now() > waitUntil) throw new Error(`fan-out did not make ${expected} pending deliveries`)
            await sleep(POLL_MS)
          }
          const made = await probe.punchEvents(tenant.tenantId, lastEventIds.get(tenant.tenantId))
          const newest = made.at(-1)
          if (newest) lastEventIds.set(tenant.tenantId, newest.id)
          if (made.length !== events) throw new Error(`${made.length} punch events, not ${events}`)
          return made
        }

        /** Waits for `expected` requests in a receiver group; the run from `t0` to the last one. */
        const received = async (group: string, expected: number, t0: number): Promise<Run> => {
          let stats = { count: 0, firstAt: 0, lastAt: 0 }
          let lastProgress = Date.now()
          let lastCount = 0
          while (stats.count < expected) {
            await sleep(POLL_MS)
            stats = await receiverGet(`/_bench/stats?group=${encodeURIComponent(group)}`)
            if (stats.count > lastCount) {
              lastCount = stats.count
              lastProgress = Date.now()
            } else if (Date.now() - lastProgress > STALL_MS) {
              throw new Error(
                `${group}: ${stats.count} of ${expected} requests arrived, then none for ${STALL_MS} ms`,
              )
            }
          }
          return {
            deliveries: stats.count,
            seconds: (stats.lastAt - t0) / 1000,
            firstArrivalMs: stats.firstAt - t0,
          }
        }

        const secretsByPath = (tenant: WebhookBenchTenant, prefix: string) =>
          Object.fromEntries(tenant.endpoints.map((e) => [e.path.replace('/hook/', prefix), e.secret]))

        const dispatch = async (scenario: Scenario, events: number): Promise<{ run: Run; check: Check }> => {
          const tenant = database.tenants[scenario.name] as WebhookBenchTenant
          const t0 = Date.now()
          await setEndpoints(tenant, 'resume')
          const result = await received(`/hook/${scenario.name}`, events * scenario.endpoints, t0)
          const check = await receiverPost<Check>('/_bench/check', {
            group: `/hook/${scenario.name}`,
            secrets: secretsByPath(tenant, '/hook/'),
          })
          // The outcome is written after the answer: give the last attempts a moment to record it.
          const waitUntil = Date.now() + STALL_MS
          let counts = await probe.statusCounts(tenant.tenantId)
          while ((counts.pending ?? 0) > 0 && Date.now() < waitUntil) {
            await sleep(POLL_MS)
            counts = await probe.statusCounts(tenant.tenantId)
          }
          const notDone = Object.entries(counts).filter(([status]) => status !== 'succeeded')
          if (notDone.length > 0)
            problems.push(`${scenario.name}: deliveries left ${JSON.stringify(Object.fromEntries(notDone))}`)
          await setEndpoints(tenant, 'pause')
          return { run: result, check }
        }

        /** The same events POSTed straight to the receiver (a baseline), under their own path prefix. */
        const direct = async (
          scenario: Scenario,
          events: { id: string; body: string }[],
          client: SignedPostClient,
        ): Promise<Run> => {
          const tenant = database.tenants[scenario.name] as WebhookBenchTenant
          const prefix = PREFIXES[client]
          const t0 = Date.now()
          const sent = await postSignedWebhooks({
            client,
            receiverUrl: receiver.url,
            endpoints: tenant.endpoints.map((e) => ({
              path: e.path.replace('/hook/', prefix),
              secret: e.secret,
            })),
            events,
            concurrency: webhooks.concurrency,
            endpointConcurrency: webhooks.endpointConcurrency,
          })
          if (sent.failures > 0)
            problems.push(
              `${scenario.name} ${client}: ${sent.failures} failed requests; first: ${sent.firstFailure}`,
            )
          const group = `${prefix}${scenario.name}`
          const result = await received(group, events.length * scenario.endpoints, t0)
          const check = await receiverPost<Check>('/_bench/check', {
            group,
            secrets: secretsByPath(tenant, prefix),
          })
          if (check.verified !== check.count)
            problems.push(
              `${scenario.name} ${client}: ${check.count - check.verified} signatures did not verify`,
            )
          return result
        }

        for (const scenario of scenarios) {
          const record: ScenarioRuns = { dispatcher: [], 'node-http': [], 'webhook-sender': [], checks: [] }
          runs.set(scenario.name, record)
          const warm = Math.max(
            MAX_BATCH_PUNCHES,
            Math.round(scenario.events / 10 / MAX_BATCH_PUNCHES) * MAX_BATCH_PUNCHES,
          )
          log(`${scenario.name}: warming up with ${warm} events`)
          const warmEvents = await backlog(scenario, warm)
          await dispatch(scenario, warm)
          for (const client of CLIENTS) await direct(scenario, warmEvents, client)
          await receiverPost('/_bench/clear')
          for (let round = 0; round < settings.rounds; round++) {
            const events = await backlog(scenario, scenario.events)
            // ABBA: a machine getting busier or quieter through the run weighs on every side alike.
            const sides: Side[] = ['dispatcher', ...CLIENTS]
            for (const side of round % 2 === 0 ? sides.toReversed() : sides) {
              let result: Run
              if (side === 'dispatcher') {
                const { run: r, check } = await dispatch(scenario, scenario.events)
                result = r
                record.checks.push(check)
              } else result = await direct(scenario, events, side)
              record[side].push(result)
              log(`${scenario.name} round ${round + 1} ${side}: ${perSecond(result).toFixed(0)} deliveries/s`)
            }
            await receiverPost('/_bench/clear')
          }
          const failed = await probe.failedAttempts(
            (database.tenants[scenario.name] as WebhookBenchTenant).tenantId,
          )
          if (failed.count > 0)
            problems.push(
              `${scenario.name}: ${failed.count} attempts were not answered 2xx; first: ${failed.first}`,
            )
        }
      } finally {
        await probe.close()
        await cloud.stop()
      }
    } finally {
      await database.remove()
    }
  } finally {
    agent.destroy()
    await receiver.stop()
  }

  const figures: Figure[] = []
  for (const scenario of scenarios) {
    const record = runs.get(scenario.name)
    if (!record) continue
    const subject = rate(record.dispatcher)
    const plain = rate(record['node-http'])
    const sender = rate(record['webhook-sender'])
    const label = `${scenario.endpoints} endpoint${scenario.endpoints === 1 ? '' : 's'}`
    const value = { label: 'cloud dispatcher', value: subject, unit: 'deliveries/s' }
    figures.push(
      {
        name: `deliveries/s, ${label}`,
        value,
        baseline: { label: 'direct signed POSTs, node:http', value: plain, unit: 'deliveries/s' },
        ratio: ratio(subject, plain),
      },
      {
        // The dispatcher's own HTTP client with nothing around it: the ratio is what the database,
        // the claims and the queue cost, apart from got and the SSRF filter.
        name: `deliveries/s, ${label}, vs its sender alone`,
        value,
        baseline: { label: 'WebhookSender, no database', value: sender, unit: 'deliveries/s' },
        ratio: ratio(subject, sender),
      },
    )
    for (const check of record.checks) {
      if (check.verified !== check.count)
        problems.push(
          `${scenario.name}: ${check.count - check.verified} deliveries failed signature verification`,
        )
      if (check.duplicates > 0)
        problems.push(`${scenario.name}: ${check.duplicates} deliveries arrived twice`)
    }
    const outOfOrder = record.checks.reduce((a, c) => a + c.outOfOrder, 0)
    notes.push(
      `${label}: ${scenario.events} events a round → ${scenario.events * scenario.endpoints} deliveries; ` +
        `dispatcher rounds ${record.dispatcher.map((r) => `${perSecond(r).toFixed(0)}/s`).join(', ')} ` +
        `(first arrival ${record.dispatcher.map((r) => `${r.firstArrivalMs} ms`).join(', ')} after the resume); ` +
        `node:http rounds ${record['node-http'].map((r) => `${perSecond(r).toFixed(0)}/s`).join(', ')}; ` +
        `WebhookSender rounds ${record['webhook-sender'].map((r) => `${perSecond(r).toFixed(0)}/s`).join(', ')}; ` +
        `signatures verified ${record.checks.reduce((a, c) => a + c.verified, 0)} of ${record.checks.reduce((a, c) => a + c.count, 0)}; ` +
        `${outOfOrder === 0 ? 'every endpoint got its events in order' : `${outOfOrder} deliveries arrived out of event order`}.`,
    )
  }
  notes.push(loadNote(loadBefore, loadAverageNow()))
  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  return {
    name,
    title: `Webhook delivery throughput (${dialectName(dialect)})`,
    method:
      'The cloud as `hajri-cloud serve` starts it (cloud/server.ts, dispatcher on, HAJRI_WEBHOOK_ALLOWLIST=127.0.0.1, ' +
      `HAJRI_WEBHOOK_CONCURRENCY=${webhooks.concurrency}, HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY=${webhooks.endpointConcurrency}, ` +
      `HAJRI_WEBHOOK_TENANT_CONCURRENCY=${webhooks.tenantConcurrency} (each scenario's endpoints are one tenant's), ` +
      `${dialect === 'sqlite' ? 'temporary SQLite file' : 'throwaway schema in PostgreSQL'}) in a child process; ` +
      'a receiver answering 204 at once (test/support WebhookReceiver) in another. Per round, with the endpoints ' +
      'paused, a backlog of punches is POSTed to /punches/batch (500 a request) and fanned out (not timed); then the ' +
      'endpoints are resumed through /api/console/v1 and the round runs from the resume to the arrival of the last ' +
      'delivery at the receiver. Scenarios: ' +
      scenarios.map((s) => `${s.events} events to ${s.endpoints} endpoint(s)`).join('; ') +
      `. Baselines, alternating with it (${settings.rounds} rounds, in turned order, after a warm-up of a tenth): ` +
      'the same event bodies POSTed from the parent process with the dispatcher’s limits (in flight overall and per ' +
      'endpoint), events oldest first, timed from the first POST to the last arrival; (1) by a plain node:http ' +
      'keep-alive client signing with standardwebhooks, (2) by the dispatcher’s own WebhookSender (got, the ' +
      'SSRF-filtering agent, its signing) with no database, claims or queue. Every request is checked afterwards ' +
      'with standardwebhooks verify.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures,
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the cloud (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: { dialect, webhooks, scenarios, runs: Object.fromEntries(runs) },
  }
}

export const webhookDeliveryBench: Benchmark = { name: 'webhook-delivery', run }
