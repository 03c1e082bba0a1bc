import { rm } from 'node:fs/promises'
import http from 'node:http'
import { join } from 'node:path'
import { WebhookReceiver } from '../support/webhook-receiver.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { createPunchGenerator } from './punch-generator.js'
import { type BenchResult, ratio } from './report.js'
import { ServerProcess } from './server-process.js'
import { createWebhookBenchDatabase } from './webhook-bench-database.js'
import { type DeliveryTimes, WebhookBenchProbe } from './webhook-bench-probe.js'
import { dialectName, readWebhookBenchSettings } from './webhook-bench-settings.js'
import { request } from './webhook-http.js'
import { loadAverageNow, loadNote } from './webhook-load-note.js'
import { ms, percentiles } from './webhook-percentiles.js'

const PATH = '/api/public/v1/attendance/punches'
const EMPLOYEES = 500
/** Punches a second, one POST each, on a fixed schedule. */
const RATE = 100
/** The goal: punch-to-webhook p50 under 100 ms. */
const GOAL_P50_MS = 100
/**
 * After the last punch, webhooks still arriving are waited for however long they take (a dispatcher
 * that falls behind the load shows in p50 and p99, not as missing webhooks); one that receives
 * nothing new for this long is stuck, and what has not arrived by then counts as missing.
 */
const STALL_MS = 30_000

interface Punch {
  sentAt: number
  respondedAt: number
  status: number
  /** The webhook's arrival at the receiver; NaN until it arrives. */
  arrivedAt: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function run(context: BenchContext): Promise<BenchResult> {
  const { settings, log } = context
  const startedAt = new Date()
  const loadBefore = loadAverageNow()
  const measuredSeconds = settings.seconds * 3
  const { dialect, postgresUrl, webhooks } = readWebhookBenchSettings()
  // One result file per database, so that a PostgreSQL run does not overwrite the SQLite figures.
  const name = dialect === 'sqlite' ? 'webhook-latency' : `webhook-latency-${dialect}`
  const profileName = `${name}-server`
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })

  const problems: string[] = []
  const punches = new Map<string, Punch>()
  const measured: string[] = []
  let duplicates = 0
  let unverified = 0
  let firstFailure: string | undefined
  let behindMs = 0
  let sendSeconds = Number.NaN
  let times: DeliveryTimes[] = []

  // In this process: at 100 requests a second it shares the loop with the sender at no cost worth
  // a millisecond, and arrival and sending are then read off one clock.
  const receiver = await new WebhookReceiver().start()
  receiver.respond((request) => {
    const externalId = request.json?.data.externalId
    const punch = typeof externalId === 'string' ? punches.get(externalId) : undefined
    if (punch) {
      if (Number.isNaN(punch.arrivedAt)) punch.arrivedAt = performance.now()
      else duplicates++
      if (request.verifiedWith.length === 0) unverified++
    }
    return { status: 204 }
  })
  const agent = new http.Agent({ keepAlive: true })
  try {
    const database = await createWebhookBenchDatabase({
      dialect,
      postgresUrl,
      receiverUrl: `http://127.0.0.1:${receiver.port}`,
      employees: EMPLOYEES,
      layouts: [{ name: 'latency', endpoints: 1, paused: false }],
    })
    const tenant = database.tenants.latency
    if (!tenant) throw new Error('no bench tenant')
    receiver.verifyWith(...tenant.endpoints.map((e) => e.secret))
    try {
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
      })
      try {
        const nextPunch = createPunchGenerator(database.employeeCodes)
        const headers = { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` }

        const post = async (into: string[] | undefined) => {
          const body = nextPunch()
          const punch: Punch = {
            sentAt: performance.now(),
            respondedAt: Number.NaN,
            status: 0,
            arrivedAt: Number.NaN,
          }
          punches.set(body.externalId as string, punch)
          into?.push(body.externalId as string)
          try {
            const answer = await request(agent, 'POST', `${cloud.url}${PATH}`, headers, JSON.stringify(body))
            punch.status = answer.status
            if (answer.status !== 201) firstFailure ??= `${answer.status} ${answer.body.slice(0, 300)}`
          } catch (err) {
            firstFailure ??= String(err)
          }
          punch.respondedAt = performance.now()
        }

        /** RATE punches a second on a fixed schedule, each sent when due whatever the answers do. */
        const load = async (seconds: number, into: string[] | undefined) => {
          const total = Math.round(seconds * RATE)
          const started = performance.now()
          const pending: Promise<void>[] = []
          for (let i = 0; i < total; i++) {
            const due = started + (i * 1000) / RATE
            const wait = due - performance.now()
            if (wait > 0) await sleep(wait)
            else if (into) behindMs = Math.max(behindMs, -wait)
            pending.push(post(into))
          }
          await Promise.all(pending)
          return (performance.now() - started) / 1000
        }

        /** Waits until every punch so far has its webhook, for as long as webhooks keep arriving. */
        const drain = async () => {
          const arrivedCount = () => [...punches.values()].filter((p) => !Number.isNaN(p.arrivedAt)).length
          let arrived = arrivedCount()
          let progressAt = performance.now()
          while (arrived < punches.size && performance.now() - progressAt < STALL_MS) {
            await sleep(50)
            const now = arrivedCount()
            if (now > arrived) progressAt = performance.now()
            arrived = now
          }
        }

        log(`warming up for ${settings.warmupSeconds} s at ${RATE} punches/s`)
        await load(settings.warmupSeconds, undefined)
        // The measured punches start with no queue: a backlog left by the cold start would otherwise
        // be counted in every measured webhook's latency.
        await drain()
        log(`measuring for ${measuredSeconds} s at ${RATE} punches/s`)
        sendSeconds = await load(measuredSeconds, measured)
        await drain()
        // The dispatcher writes an attempt's outcome after the answer.
        await sleep(500)
        const probe = new WebhookBenchProbe(database)
        try {
          times = await probe.deliveryTimes(tenant.tenantId)
        } finally {
          await probe.close()
        }
      } finally {
        await cloud.stop()
      }
    } finally {
      await database.remove()
    }
  } finally {
    agent.destroy()
    await receiver.stop()
  }

  const rows = measured.map((id) => punches.get(id) as Punch)
  const webhook = percentiles(
    rows.filter((p) => !Number.isNaN(p.arrivedAt)).map((p) => p.arrivedAt - p.sentAt),
  )
  const response = percentiles(rows.map((p) => p.respondedAt - p.sentAt))
  const beforeAnswer = rows.filter((p) => p.arrivedAt < p.respondedAt).length
  const non201 = rows.filter((p) => p.status !== 201).length
  const missing = rows.filter((p) => Number.isNaN(p.arrivedAt)).length
  const achievedRate = rows.length / sendSeconds
  // A dispatcher slower than the punches has a queue that grows for as long as the run lasts, and
  // so do p50 and p99, which then measure the run's length as much as the dispatcher: the latency of
  // the first and the last tenth of the punches tells the two apart.
  const arrivals = rows.map((p) => p.arrivedAt).filter((t) => !Number.isNaN(t))
  const deliveryRate = (arrivals.length - 1) / ((Math.max(...arrivals) - Math.min(...arrivals)) / 1000)
  const tenth = Math.max(1, Math.floor(rows.length / 10))
  const latencyOf = (part: Punch[]) =>
    percentiles(part.filter((p) => !Number.isNaN(p.arrivedAt)).map((p) => p.arrivedAt - p.sentAt))
  const firstTenth = latencyOf(rows.slice(0, tenth))
  const lastTenth = latencyOf(rows.slice(-tenth))
  // p50 of each second's punches, in the JSON: where in the run a queue formed and drained.
  const p50BySecond = Array.from(
    { length: Math.ceil(rows.length / RATE) },
    (_, i) => Math.round(latencyOf(rows.slice(i * RATE, (i + 1) * RATE)).p50 * 10) / 10,
  )
  if (non201 > 0) problems.push(`${non201} punches not answered 201; first: ${firstFailure}`)
  if (missing > 0)
    problems.push(
      `${missing} punches' webhooks did not arrive (none arrived in the last ${STALL_MS / 1000} s)`,
    )
  if (duplicates > 0) problems.push(`${duplicates} webhooks arrived twice`)
  if (unverified > 0) problems.push(`${unverified} webhooks failed signature verification`)
  if (achievedRate < RATE * 0.95)
    problems.push(`the sender reached ${achievedRate.toFixed(1)} punches/s, not ${RATE}`)

  // Stages, on the server's clock (ms precision) against this process's (same machine, same wall clock).
  const wall = (t: number) => performance.timeOrigin + t
  const byId = new Map(times.map((t) => [t.externalId, t]))
  const stage = (f: (p: Punch, t: DeliveryTimes) => number) =>
    percentiles(
      measured.flatMap((id) => {
        const p = punches.get(id) as Punch
        const t = byId.get(id)
        return t && !Number.isNaN(p.arrivedAt) ? [f(p, t)] : []
      }),
    )
  const stages = {
    'POST sent → event row written': stage((p, t) => t.eventAt / 1000 - wall(p.sentAt)),
    'event row → fanned out (dispatcher round began)': stage((_, t) => (t.deliveryAt - t.eventAt) / 1000),
    'fanned out → attempt began (claim, secret)': stage((_, t) => (t.attemptAt - t.deliveryAt) / 1000),
    'attempt began → arrival at receiver': stage((p, t) => wall(p.arrivedAt) - t.attemptAt / 1000),
  }
  const stageNote = Object.entries(stages)
    .map(([name, s]) => `${name}: p50 ${ms(s.p50)}, p99 ${ms(s.p99)}`)
    .join('; ')
  const met = webhook.p50 < GOAL_P50_MS
  log(
    `punch-to-webhook p50 ${ms(webhook.p50)} ms, p99 ${ms(webhook.p99)} ms; POST p50 ${ms(response.p50)} ms`,
  )

  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  return {
    name,
    title: `Punch-to-webhook latency at ${RATE} punches/s (${dialectName(dialect)})`,
    method:
      `Single punches POSTed to ${PATH} at ${RATE}/s on a fixed schedule (open loop: each sent when due, whatever ` +
      `the answers do) for ${measuredSeconds} s after ${settings.warmupSeconds} s of warm-up, against the cloud as ` +
      '`hajri-cloud serve` starts it (cloud/server.ts, dispatcher on, HAJRI_WEBHOOK_ALLOWLIST=127.0.0.1, ' +
      `HAJRI_WEBHOOK_CONCURRENCY=${webhooks.concurrency}, HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY=${webhooks.endpointConcurrency}, ` +
      `${dialect === 'sqlite' ? 'temporary SQLite file' : 'throwaway schema in PostgreSQL'}) in a child process, ` +
      'with one webhook endpoint subscribed to every event. The receiver ' +
      '(test/support WebhookReceiver, answering 204, checking each signature with standardwebhooks) runs in this ' +
      'process and times each attendance.punch.created arrival on the clock the POST was sent by. Latency: POST ' +
      'sent → webhook arrived. Baseline: the same POSTs’ own response time (sent → 201 read), in the same run: ' +
      'what the punching client itself waits to learn of the punch, so the ratio is how much later a subscriber ' +
      'hears of it. ' +
      'Stage times come from the database rows (event, delivery, first attempt) after the run.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'punch-to-webhook p50',
        value: { label: 'POST sent → webhook arrived', value: webhook.p50, unit: 'ms' },
        baseline: { label: 'punch POST response', value: response.p50, unit: 'ms' },
        ratio: ratio(webhook.p50, response.p50),
        goal: { of: 'value', op: '<=', target: GOAL_P50_MS },
      },
      {
        name: 'punch-to-webhook p99',
        value: { label: 'POST sent → webhook arrived', value: webhook.p99, unit: 'ms' },
        baseline: { label: 'punch POST response', value: response.p99, unit: 'ms' },
        ratio: ratio(webhook.p99, response.p99),
      },
    ],
    problems,
    notes: [
      loadNote(loadBefore, loadAverageNow()),
      `goal p50 < ${GOAL_P50_MS} ms: ${met ? 'met' : 'NOT met'} (p50 ${ms(webhook.p50)} ms, p90 ${ms(webhook.p90)}, ` +
        `p99 ${ms(webhook.p99)}, max ${ms(webhook.max)} over ${webhook.count} webhooks).`,
      `${rows.length} punches in ${sendSeconds.toFixed(1)} s (${achievedRate.toFixed(1)}/s, at most ` +
        `${ms(behindMs)} ms behind schedule); ${non201} not 201; ${missing} webhooks missing; ${duplicates} duplicates; ` +
        `POST response p50 ${ms(response.p50)} ms, p99 ${ms(response.p99)} ms.`,
      `webhooks arrived at ${deliveryRate.toFixed(1)}/s from first to last; punch-to-webhook p50 of the first ` +
        `tenth of the punches ${ms(firstTenth.p50)} ms, of the last tenth ${ms(lastTenth.p50)} ms (a last tenth ` +
        'well above the first means the dispatcher fell behind the punches and its queue grew through the run).',
      `stages (ms): ${stageNote}.`,
      `${beforeAnswer} of ${rows.length} webhooks arrived before their punch's 201 was read (both wait for the ` +
        `punch's commit to be durable: ${dialect === 'sqlite' ? 'the WAL fsync' : 'the PostgreSQL COMMIT'}).`,
    ],
    appendix:
      profileSummary &&
      `CPU profile of the cloud (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: {
      dialect,
      webhooks,
      rate: RATE,
      deliveryRate,
      firstTenth,
      lastTenth,
      p50BySecond,
      measuredSeconds,
      webhook,
      response,
      stages,
      beforeAnswer,
      behindMs,
    },
  }
}

export const webhookLatencyBench: Benchmark = { name: 'webhook-latency', run }
