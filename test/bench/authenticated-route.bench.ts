import { rm } from 'node:fs/promises'
import http from 'node:http'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createBenchApiKeys } from './bench-api-keys.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import {
  type BenchDialect,
  createDialectBenchDatabase,
  dialectLabel,
  postgresSkipReason,
} from './dialect-bench-database.js'
import { skipped } from './punch-endpoint.bench.js'
import { type BenchResult, ratio } from './report.js'
import type { LoadResult } from './run-load.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/employees'
const EMPLOYEES = 1_000
// The same client settings as the punch endpoint benchmark: enough to keep one server core busy.
const CONNECTIONS = 32
/**
 * Keys the load cycles through. One key's limit (MAX_RATE_LIMIT_PER_MINUTE a minute) is less than a
 * minute of this load can reach; spread over this many keys the limiter counts every request and
 * refuses none. Every key costs the same to check, so the measure is that of one key.
 */
const KEYS = 64

interface Totals {
  ok: number
  non2xx: number
  errors: number
  seconds: number
  okPerSecond: number
  /** The worst round's p99. */
  p99Ms: number
  p50Ms: number
}

function totals(runs: readonly LoadResult[]): Totals {
  const sum = (f: (r: LoadResult) => number) => runs.reduce((acc, r) => acc + f(r), 0)
  const ok = sum((r) => r.ok)
  const seconds = sum((r) => r.seconds)
  return {
    ok,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors + r.timeouts),
    seconds,
    okPerSecond: ok / seconds,
    p99Ms: Math.max(...runs.map((r) => r.latencyMs.p99)),
    p50Ms: Math.max(...runs.map((r) => r.latencyMs.p50)),
  }
}

/**
 * One autocannon run of GETs (HTTP/1.1 keep-alive, no pipelining), each for another employee and
 * with the next key: run-load.ts sends one URL, and a read of the same row every time would measure
 * a narrower path than a sync client takes.
 */
async function loadEmployeeReads(
  baseUrl: string,
  codes: readonly string[],
  keys: readonly string[],
  seconds: number,
): Promise<LoadResult> {
  let n = 0
  let errorSample: string | undefined
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          n++
          return {
            ...request,
            path: `${PATH}/${codes[n % codes.length]}`,
            headers: { authorization: `Bearer ${keys[n % keys.length]}` },
          }
        },
        onResponse: (status, body) => {
          if ((status < 200 || status > 299) && errorSample === undefined) errorSample = `${status} ${body}`
        },
      },
    ],
  })
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    seconds: result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    okPerSecond: result['2xx'] / result.duration,
    latencyMs: {
      average: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    errorSample,
  }
}

/**
 * Checks that each server runs the path it claims to: the real one refuses a request without a key
 * and counts one with a key; the baseline serves without a key and counts nothing. Both answer the
 * same employee. Returns what is wrong.
 */
async function checkServers(
  authenticated: ServerProcess,
  baseline: ServerProcess,
  code: string,
  key: string,
): Promise<{ problems: string[]; remaining: string | undefined }> {
  const problems: string[] = []
  const url = (server: ServerProcess) => `${server.url}${PATH}/${code}`
  const anonymous = await rawGet(url(authenticated), undefined)
  if (anonymous.status !== 401)
    problems.push(`the authenticated route answered ${anonymous.status} without a key, not 401`)
  const withKey = await rawGet(url(authenticated), key)
  if (withKey.status !== 200) problems.push(`the authenticated route answered ${withKey.status} with a key`)
  if (withKey.headers['ratelimit-limit'] !== String(MAX_RATE_LIMIT_PER_MINUTE))
    problems.push('the authenticated route sent no RateLimit-Limit: the limiter did not run')
  const base = await rawGet(url(baseline), undefined)
  if (base.status !== 200) problems.push(`the baseline answered ${base.status} without a key, not 200`)
  if (base.headers['ratelimit-limit'] !== undefined) problems.push('the baseline ran a rate limiter')
  if (withKey.body !== base.body) problems.push('the two servers answered different bodies for one employee')
  const remaining = withKey.headers['ratelimit-remaining']
  return { problems, remaining: typeof remaining === 'string' ? remaining : undefined }
}

function rawGet(
  url: string,
  key: string | undefined,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: key ? { authorization: `Bearer ${key}` } : {} }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: response.headers,
        }),
      )
    })
    request.on('error', reject)
  })
}

function authenticatedRouteRun(dialect: BenchDialect, name: string) {
  return async (context: BenchContext): Promise<BenchResult> => {
    const { settings, log } = context
    const startedAt = new Date()
    const title = `Authenticated, rate-limited read vs the same route without authentication (${dialectLabel(dialect)})`
    const skip = await postgresSkipReason(dialect)
    if (skip) return skipped(name, title, skip, startedAt)
    const database = await createDialectBenchDatabase(dialect, EMPLOYEES)
    // HAJRI_BENCH_CPU_PROF=1: where the authenticated server's time goes (its timings are then perturbed).
    const profileName = `${name}-server`
    const profileDirectory = settings.cpuProfile
      ? join(context.resultsDirectory, 'profiles', profileName)
      : undefined
    // Profiles of an earlier run would be mistaken for this one's.
    if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })
    const problems: string[] = []
    const notes: string[] = []
    const baselineRuns: LoadResult[] = []
    const authenticatedRuns: LoadResult[] = []
    let remainingAfter: string | undefined
    try {
      const keys = [
        database.apiKey,
        ...(await createBenchApiKeys(database.url, database.tenantId, KEYS - 1, ['employees:read'])),
      ]
      const baseline = await ServerProcess.start({
        entry: 'unauthenticated-server.ts',
        args: [database.url, database.tenantId],
      })
      let authenticated: ServerProcess | undefined
      try {
        authenticated = await ServerProcess.start({
          entry: 'cloud-server.ts',
          args: [database.url],
          profileDirectory,
        })
        const code = database.employeeCodes[0] as string
        const before = await checkServers(authenticated, baseline, code, database.apiKey)
        problems.push(...before.problems)
        const load = (server: ServerProcess, seconds: number) =>
          loadEmployeeReads(server.url, database.employeeCodes, keys, seconds)
        log(`warming up both servers for ${settings.warmupSeconds} s each`)
        await load(baseline, settings.warmupSeconds)
        await load(authenticated, settings.warmupSeconds)
        for (let round = 0; round < settings.rounds; round++) {
          // ABBA order: a machine getting busier or quieter through the run weighs on both alike.
          const order = round % 2 === 0 ? [baseline, authenticated] : [authenticated, baseline]
          for (const server of order) {
            const result = await load(server, settings.seconds)
            ;(server === baseline ? baselineRuns : authenticatedRuns).push(result)
            log(
              `round ${round + 1} ${server === baseline ? 'without authentication' : 'authenticated, rate-limited'}: ` +
                `${result.okPerSecond.toFixed(0)} 2xx/s, p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}`,
            )
          }
        }
        // The limiter counted the load: the first key has spent some of its allowance.
        const after = await checkServers(authenticated, baseline, code, database.apiKey)
        problems.push(...after.problems)
        remainingAfter = after.remaining
        if (remainingAfter !== undefined && Number(remainingAfter) >= MAX_RATE_LIMIT_PER_MINUTE - 2)
          problems.push(`the limiter did not count the load (RateLimit-Remaining ${remainingAfter} after it)`)
      } finally {
        await Promise.all([baseline.stop(), authenticated?.stop()])
      }
    } finally {
      await database.remove()
    }

    const base = totals(baselineRuns)
    const subject = totals(authenticatedRuns)
    for (const [label, t] of [
      ['without authentication', base],
      ['authenticated, rate-limited', subject],
    ] as const) {
      if (t.non2xx > 0) problems.push(`${label}: ${t.non2xx} non-2xx responses (the error path was measured)`)
      if (t.errors > 0) problems.push(`${label}: ${t.errors} connection errors or timeouts`)
    }
    const sample =
      authenticatedRuns.find((r) => r.errorSample)?.errorSample ??
      baselineRuns.find((r) => r.errorSample)?.errorSample
    if (sample) problems.push(`first error response: ${sample.slice(0, 300)}`)
    notes.push(
      `authenticated, rate-limited: ${subject.ok} 2xx, ${subject.non2xx} non-2xx, ${subject.errors} errors in ${subject.seconds.toFixed(1)} s.`,
      `without authentication: ${base.ok} 2xx, ${base.non2xx} non-2xx, ${base.errors} errors in ${base.seconds.toFixed(1)} s.`,
      `The first key's RateLimit-Remaining after the load: ${remainingAfter ?? 'unknown'} of ${MAX_RATE_LIMIT_PER_MINUTE} (the limiter counted; the window may have rolled over during the run).`,
    )

    let profileSummary: string | undefined
    if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

    return {
      name,
      title,
      method:
        `GET ${PATH}/:employeeCode with autocannon (${CONNECTIONS} connections, no pipelining, ` +
        `${settings.warmupSeconds} s warm-up, ${settings.rounds} alternating rounds of ${settings.seconds} s per server), ` +
        `each request for the next of ${EMPLOYEES} employees and with the next of ${KEYS} API keys of one tenant ` +
        `(each limited to ${MAX_RATE_LIMIT_PER_MINUTE}/min, so the limiter counts every request and refuses none). ` +
        'Subject: the Hajri cloud as served (buildApp: browser-origin check, Bearer authentication against ' +
        `${dialectLabel(dialect)}, @fastify/rate-limit in memory, logger off) in a child process. Baseline: the same employee routes, ` +
        `server options and plugins (errors, JSON body, database, OpenAPI) over the same ${dialect === 'sqlite' ? 'SQLite file' : 'PostgreSQL schema'}, with a hook ` +
        'that sets a fixed tenant in place of the browser-origin check, authentication and the limiter, also in a ' +
        'child process. Throughput counts 2xx only; p99 is the worst round.',
      startedAt: startedAt.toISOString(),
      elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
      figures: [
        {
          name: 'throughput',
          value: { label: 'authenticated, rate-limited', value: subject.okPerSecond, unit: 'req/s' },
          baseline: { label: 'without authentication', value: base.okPerSecond, unit: 'req/s' },
          ratio: ratio(subject.okPerSecond, base.okPerSecond),
          goal: { of: 'ratio', op: '>=', target: 0.8 },
        },
        {
          name: 'p99 latency',
          value: { label: 'authenticated, rate-limited', value: subject.p99Ms, unit: 'ms' },
          baseline: { label: 'without authentication', value: base.p99Ms, unit: 'ms' },
          ratio: ratio(subject.p99Ms, base.p99Ms),
        },
      ],
      problems,
      notes,
      appendix:
        profileSummary &&
        `CPU profile of the authenticated server (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
      details: { baseline: base, subject, baselineRuns, authenticatedRuns, keys: KEYS },
    }
  }
}

export const authenticatedRouteBench: Benchmark = {
  name: 'authenticated-route',
  run: authenticatedRouteRun('sqlite', 'authenticated-route'),
}
export const authenticatedRoutePostgresBench: Benchmark = {
  name: 'authenticated-route-postgres',
  run: authenticatedRouteRun('postgres', 'authenticated-route-postgres'),
}
