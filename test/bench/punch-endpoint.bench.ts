import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBenchApiKeys } from './bench-api-keys.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import {
  type BenchDialect,
  createDialectBenchDatabase,
  type DialectBenchDatabase,
  dialectLabel,
  postgresSkipReason,
} from './dialect-bench-database.js'
import { fsyncLatencyMs, fsyncNote } from './fsync-latency.js'
import { createPunchGenerator } from './punch-generator.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { type LoadResult, runLoad } from './run-load.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/attendance/punches'
// A shift change: thousands of workers punching once or twice each. With a few hundred, every
// employee's day held over a hundred punches by the end of a run, and the attendance worker of
// `serve` recomputed ever larger days: a load no factory sends.
const EMPLOYEES = 10_000
// Enough concurrent clients to keep one server core busy; the same for every server.
const CONNECTIONS = 32
/**
 * Keys of each database's tenant the load cycles through, as a site's agents and terminals each
 * have their own: at 7,000 punches a second one key would pass its limit within a round, and the
 * rest of the round would measure 429s.
 */
const KEYS = 16
const TIME_ZONE = 'Asia/Kolkata'

export type Side = 'bare' | 'handWritten' | 'cloud' | 'serve' | 'serveSilent'
const SIDES: Side[] = ['bare', 'handWritten', 'cloud', 'serve', 'serveSilent']
/** The servers with a database, each its own. */
const DATABASE_SIDES = ['handWritten', 'cloud', 'serve', 'serveSilent'] as const

function labels(dialect: BenchDialect): Record<Side, string> {
  return {
    bare: 'bare Fastify route',
    handWritten:
      dialect === 'sqlite'
        ? 'hand-written route, prepared statements + group commit'
        : 'hand-written route, one statement',
    cloud: 'punch endpoint (logger off)',
    serve: 'punch endpoint as `serve` runs it',
    serveSilent: '`serve` with its log level silent',
  }
}

export interface Totals {
  ok: number
  non2xx: number
  errors: number
  seconds: number
  okPerSecond: number
  /** The worst round's p99: one slow round is something a client would have seen. */
  p99Ms: number
  p50Ms: number
}

export function totals(runs: readonly LoadResult[]): Totals {
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

/** A benchmark that cannot run here: no figures, the reason in the notes (as the tests skip). */
export function skipped(name: string, title: string, reason: string, startedAt: Date): BenchResult {
  return {
    name,
    title,
    method: 'Not run.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [],
    problems: [],
    notes: [`Not measured: ${reason}.`],
    details: {},
  }
}

/**
 * POST /attendance/punches on one database against, in the same run, four other servers each in a
 * process of its own: a bare Fastify route parsing the same bodies, a hand-written route doing the
 * same durable work (servers/hand-written-sqlite-punch-server.ts, hand-written-pg-punch-server.ts),
 * the cloud as `serve` runs it (info logging, the dispatcher and the attendance worker), and the
 * same with its log level silent, which tells what logging costs with all else equal. Each
 * database server has a database of its own, so that one's background work (serve's attendance
 * worker) never runs on another's rows.
 */
function punchEndpointRun(dialect: BenchDialect, name: string) {
  return async (context: BenchContext): Promise<BenchResult> => {
    const { settings, log } = context
    const startedAt = new Date()
    const title = `Single punch endpoint (${dialectLabel(dialect)})`
    const skip = await postgresSkipReason(dialect)
    if (skip) return skipped(name, title, skip, startedAt)
    const LABELS = labels(dialect)
    const profileName = `${name}-server`
    const profileDirectory = settings.cpuProfile
      ? join(context.resultsDirectory, 'profiles', profileName)
      : undefined
    if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })
    const problems: string[] = []
    const notes: string[] = []
    const runs: Record<Side, LoadResult[]> = {
      bare: [],
      handWritten: [],
      cloud: [],
      serve: [],
      serveSilent: [],
    }
    const warmupOk: Record<Side, number> = { bare: 0, handWritten: 0, cloud: 0, serve: 0, serveSilent: 0 }
    const stored: Partial<Record<Side, number>> = {}
    let fsyncBeforeMs = Number.NaN
    let fsyncAfterMs = Number.NaN
    const databases: Partial<Record<Side, DialectBenchDatabase>> = {}
    const servers: Partial<Record<Side, ServerProcess>> = {}
    try {
      const keys: Partial<Record<Side, string[]>> = {}
      for (const side of DATABASE_SIDES) {
        const database = await createDialectBenchDatabase(dialect, EMPLOYEES)
        databases[side] = database
        keys[side] = [
          database.apiKey,
          ...(await createBenchApiKeys(database.url, database.tenantId, KEYS - 1, ['attendance:write'])),
        ]
      }
      const db = (side: Side) => (databases[side] ?? databases.cloud) as DialectBenchDatabase
      servers.bare = await ServerProcess.start({ entry: 'bare-server.ts' })
      servers.handWritten = await ServerProcess.start({
        entry:
          dialect === 'sqlite' ? 'hand-written-sqlite-punch-server.ts' : 'hand-written-pg-punch-server.ts',
        args: [db('handWritten').url, TIME_ZONE],
      })
      servers.cloud = await ServerProcess.start({
        entry: 'cloud-server.ts',
        args: [db('cloud').url],
        profileDirectory,
      })
      for (const [side, level] of [
        ['serve', 'info'],
        ['serveSilent', 'silent'],
      ] as const) {
        const { url, secretKey } = db(side)
        servers[side] = await ServerProcess.start({
          entry: 'cloud-serve-server.ts',
          args: [url, level, ...(secretKey ? [secretKey] : [])],
          discardStdout: true,
        })
      }
      const generators = Object.fromEntries(
        SIDES.map((side) => [side, createPunchGenerator(db(side).employeeCodes)]),
      ) as Record<Side, ReturnType<typeof createPunchGenerator>>
      const load = (side: Side, seconds: number) =>
        runLoad({
          url: `${(servers[side] as ServerProcess).url}${PATH}`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          authorizations: (keys[side] ?? [db(side).apiKey]).map((key) => `Bearer ${key}`),
          connections: CONNECTIONS,
          seconds,
          nextBody: () => JSON.stringify(generators[side]()),
        })
      log(`warming up the ${SIDES.length} servers for ${settings.warmupSeconds} s each`)
      if (dialect === 'sqlite') fsyncBeforeMs = fsyncLatencyMs(tmpdir())
      for (const side of SIDES) warmupOk[side] = (await load(side, settings.warmupSeconds)).ok
      for (let round = 0; round < settings.rounds; round++) {
        // Turned order each round: a machine getting busier or quieter weighs on every side alike.
        const order = round % 2 === 0 ? SIDES : [...SIDES].reverse()
        for (const side of order) {
          const result = await load(side, settings.seconds)
          runs[side].push(result)
          log(
            `round ${round + 1} ${LABELS[side]}: ${result.okPerSecond.toFixed(0)} 2xx/s, ` +
              `p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}`,
          )
        }
      }
      await Promise.all(Object.values(servers).map((s) => s.stop()))
      for (const side of DATABASE_SIDES) stored[side] = await db(side).countPunches()
      if (dialect === 'sqlite') fsyncAfterMs = fsyncLatencyMs(tmpdir())
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()))
      for (const database of Object.values(databases)) await database.remove()
    }

    const t = Object.fromEntries(SIDES.map((side) => [side, totals(runs[side])])) as Record<Side, Totals>
    for (const side of SIDES) {
      if (t[side].non2xx > 0)
        problems.push(`${LABELS[side]}: ${t[side].non2xx} non-2xx responses (the error path was measured)`)
      if (t[side].errors > 0)
        problems.push(`${LABELS[side]}: ${t[side].errors} connection errors or timeouts`)
      const sample = runs[side].find((r) => r.errorSample)?.errorSample
      if (sample) problems.push(`${LABELS[side]}: first error response: ${sample.slice(0, 300)}`)
    }
    for (const side of DATABASE_SIDES) {
      // autocannon drops the responses still in flight when a run ends, so the log may hold a few more.
      const answered = t[side].ok + warmupOk[side]
      if ((stored[side] ?? 0) < answered)
        problems.push(`${LABELS[side]}: ${answered} punches answered 201 but only ${stored[side]} stored`)
    }
    if (dialect === 'sqlite')
      notes.push(
        `${fsyncNote(fsyncBeforeMs, fsyncAfterMs)} Every 201 of the cloud and of the hand-written route waits for the fsync that makes its punch durable (shared by concurrent punches); the bare route never touches the disk.`,
      )
    else
      notes.push(
        'PostgreSQL is local, synchronous_commit as the server has it (on by default): a 201 follows a durable commit.',
      )
    for (const side of SIDES)
      notes.push(
        `${LABELS[side]}: ${t[side].ok} 2xx, ${t[side].non2xx} non-2xx, ${t[side].errors} errors in ${t[side].seconds.toFixed(1)} s; ` +
          `p50 ${t[side].p50Ms} ms, p99 ${t[side].p99Ms} ms${stored[side] === undefined ? '' : `; ${stored[side]} punches stored (warm-up included)`}.`,
      )
    let profileSummary: string | undefined
    if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

    const measure = (side: Side, value: number, unit: string) => ({ label: LABELS[side], value, unit })
    const rate = (side: Side) => measure(side, t[side].okPerSecond, 'req/s')
    const figures: Figure[] = [
      {
        name: 'throughput vs the hand-written route',
        value: rate('cloud'),
        baseline: rate('handWritten'),
        ratio: ratio(t.cloud.okPerSecond, t.handWritten.okPerSecond),
        ...(dialect === 'postgres' ? { goal: { of: 'ratio' as const, op: '>=' as const, target: 0.8 } } : {}),
      },
      {
        name: 'throughput vs bare Fastify',
        value: rate('cloud'),
        baseline: rate('bare'),
        ratio: ratio(t.cloud.okPerSecond, t.bare.okPerSecond),
        ...(dialect === 'sqlite' ? { goal: { of: 'ratio' as const, op: '>=' as const, target: 0.5 } } : {}),
      },
      {
        name: 'hand-written route vs bare Fastify',
        value: rate('handWritten'),
        baseline: rate('bare'),
        ratio: ratio(t.handWritten.okPerSecond, t.bare.okPerSecond),
      },
      {
        name: '`serve` vs the same with its log level silent',
        value: rate('serve'),
        baseline: rate('serveSilent'),
        ratio: ratio(t.serve.okPerSecond, t.serveSilent.okPerSecond),
        goal: { of: 'ratio' as const, op: '>=' as const, target: 0.9 },
      },
      {
        name: '`serve` (info logging, dispatcher, attendance worker) vs logger off',
        value: rate('serve'),
        baseline: rate('cloud'),
        ratio: ratio(t.serve.okPerSecond, t.cloud.okPerSecond),
      },
      {
        name: '`serve` vs the hand-written route',
        value: rate('serve'),
        baseline: rate('handWritten'),
        ratio: ratio(t.serve.okPerSecond, t.handWritten.okPerSecond),
        ...(dialect === 'sqlite' ? { goal: { of: 'ratio' as const, op: '>=' as const, target: 0.8 } } : {}),
      },
      {
        name: 'p99 latency vs the hand-written route',
        value: measure('cloud', t.cloud.p99Ms, 'ms'),
        baseline: measure('handWritten', t.handWritten.p99Ms, 'ms'),
        ratio: ratio(t.cloud.p99Ms, t.handWritten.p99Ms),
        ...(dialect === 'postgres' ? { goal: { of: 'value' as const, op: '<=' as const, target: 30 } } : {}),
      },
    ]
    return {
      name,
      title,
      method:
        `POST ${PATH} with autocannon (${CONNECTIONS} connections, no pipelining, ${settings.warmupSeconds} s warm-up each, ` +
        `${settings.rounds} rounds of ${settings.seconds} s per server in turned order) against five child processes: ` +
        `the Hajri cloud (buildApp, logger off, no dispatcher), the cloud as \`hajri-cloud serve\` starts it ` +
        '(startServer: pino at info to stdout, here /dev/null; webhook dispatcher and attendance worker running), ' +
        'the same with its log level silent, ' +
        (dialect === 'sqlite'
          ? 'a hand-written route (better-sqlite3 prepared statements; WAL, synchronous=NORMAL; the requests of one ' +
            'event-loop turn in one transaction, then one shared fdatasync of the WAL before any answer, as the cloud; in ' +
            'each request: the key with its tenant, the employee, the punch ON CONFLICT DO NOTHING or its replay, its ' +
            'event and its day) '
          : 'a hand-written route (one named statement a punch in autocommit: the key with its tenant, the employee, the ' +
            'punch ON CONFLICT DO NOTHING RETURNING, its event and its day only if inserted) ') +
        'and a bare Fastify route parsing the same JSON bodies and answering 201. Each database server has its own ' +
        `${dialect === 'sqlite' ? 'temporary SQLite file' : 'throwaway PostgreSQL schema'}, migrated by the product, ` +
        `with one tenant of ${EMPLOYEES} ACTIVE employees and ${KEYS} API keys, used in turn. Every request is a distinct valid punch. Throughput counts ` +
        '2xx; p99 is the worst round.',
      startedAt: startedAt.toISOString(),
      elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
      figures,
      problems,
      notes,
      appendix:
        profileSummary &&
        `CPU profile of the punch server (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
      details: { ...t, stored, fsyncBeforeMs, fsyncAfterMs, runs },
    }
  }
}

export const punchEndpointBench: Benchmark = {
  name: 'punch-endpoint',
  run: punchEndpointRun('sqlite', 'punch-endpoint'),
}
export const punchEndpointPostgresBench: Benchmark = {
  name: 'punch-endpoint-postgres',
  run: punchEndpointRun('postgres', 'punch-endpoint-postgres'),
}
