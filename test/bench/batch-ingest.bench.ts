import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_BATCH_PUNCHES } from '../../shared/punch.js'
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
import { skipped } from './punch-endpoint.bench.js'
import { createPunchGenerator } from './punch-generator.js'
import { rawPgPunchInsert } from './raw-pg-punch-insert.js'
import { type RawInsertResult, rawPunchInsert } from './raw-punch-insert.js'
import { type BenchResult, ratio } from './report.js'
import { type LoadResult, runLoad } from './run-load.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/attendance/punches/batch'
const EMPLOYEES = 500
// A few agents uploading their spools at once: enough to keep the server busy while one request's
// response travels, not so many that 85 kB bodies queue for seconds.
const CONNECTIONS = 4
const TIME_ZONE = 'Asia/Kolkata'

type Side = 'cloud' | 'handWritten'
const SIDES: Side[] = ['cloud', 'handWritten']

/** What the batch responses said, from their summary (the first thing in each body). */
interface Tally {
  created: number
  duplicate: number
  rejected: number
  unreadable: number
}

const SUMMARY = /"created":(\d+),"duplicate":(\d+),"rejected":(\d+)/

function emptyTally(): Tally {
  return { created: 0, duplicate: 0, rejected: 0, unreadable: 0 }
}

function tally(into: Tally, status: number, body: string): void {
  if (status !== 200) return
  const m = SUMMARY.exec(body.slice(0, 200))
  if (!m) {
    into.unreadable++
    return
  }
  into.created += Number(m[1])
  into.duplicate += Number(m[2])
  into.rejected += Number(m[3])
}

interface SideRun {
  load: LoadResult
  tally: Tally
}

function batchRun(dialect: BenchDialect, name: string) {
  return async (context: BenchContext): Promise<BenchResult> => {
    const { settings, log } = context
    const startedAt = new Date()
    const title = `Batch ingestion (${dialectLabel(dialect)})`
    const skip = await postgresSkipReason(dialect)
    if (skip) return skipped(name, title, skip, startedAt)
    const LABELS: Record<Side, string> = {
      cloud: 'batch endpoint',
      handWritten:
        dialect === 'sqlite'
          ? 'hand-written batch route, prepared statements in one transaction'
          : 'hand-written batch route, one unnest statement',
    }
    const rawLabel =
      dialect === 'sqlite'
        ? 'raw better-sqlite3 insert, 500 a transaction'
        : 'raw multi-row INSERT, 500 rows a statement'
    const profileName = `${name}-server`
    const profileDirectory = settings.cpuProfile
      ? join(context.resultsDirectory, 'profiles', profileName)
      : undefined
    if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })
    const runs: Record<Side, SideRun[]> = { cloud: [], handWritten: [] }
    const raws: RawInsertResult[] = []
    const warmup: Record<Side, Tally> = { cloud: emptyTally(), handWritten: emptyTally() }
    const stored: Partial<Record<Side, number>> = {}
    let fsyncBeforeMs = Number.NaN
    let fsyncAfterMs = Number.NaN
    const databases: Partial<Record<Side | 'raw', DialectBenchDatabase>> = {}
    const servers: Partial<Record<Side, ServerProcess>> = {}
    try {
      for (const side of ['cloud', 'handWritten'] as const)
        databases[side] = await createDialectBenchDatabase(dialect, EMPLOYEES)
      if (dialect === 'postgres') databases.raw = await createDialectBenchDatabase(dialect, EMPLOYEES)
      const db = (side: Side) => databases[side] as DialectBenchDatabase
      servers.cloud = await ServerProcess.start({
        entry: 'cloud-server.ts',
        args: [db('cloud').url],
        profileDirectory,
      })
      servers.handWritten = await ServerProcess.start({
        entry:
          dialect === 'sqlite' ? 'hand-written-sqlite-punch-server.ts' : 'hand-written-pg-punch-server.ts',
        args: [db('handWritten').url, TIME_ZONE],
      })
      const generators = {
        cloud: createPunchGenerator(db('cloud').employeeCodes),
        handWritten: createPunchGenerator(db('handWritten').employeeCodes),
      }
      const load = (side: Side, seconds: number, into: Tally) =>
        runLoad({
          url: `${(servers[side] as ServerProcess).url}${PATH}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${db(side).apiKey}` },
          connections: CONNECTIONS,
          seconds,
          timeoutSeconds: 60,
          nextBody: () =>
            JSON.stringify({ punches: Array.from({ length: MAX_BATCH_PUNCHES }, () => generators[side]()) }),
          onResponse: (status, body) => tally(into, status, body),
        })
      const raw = (rows: number) =>
        dialect === 'sqlite'
          ? rawPunchInsert(rows, MAX_BATCH_PUNCHES)
          : rawPgPunchInsert(
              (databases.raw as DialectBenchDatabase).url,
              (databases.raw as DialectBenchDatabase).tenantId,
              rows,
              MAX_BATCH_PUNCHES,
            )
      log(`warming up for ${settings.warmupSeconds} s each`)
      if (dialect === 'sqlite') fsyncBeforeMs = fsyncLatencyMs(tmpdir())
      for (const side of SIDES) await load(side, settings.warmupSeconds, warmup[side])
      await raw(MAX_BATCH_PUNCHES * 4)
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? SIDES : [...SIDES].reverse()
        for (const side of order) {
          const t = emptyTally()
          const result = await load(side, settings.seconds, t)
          runs[side].push({ load: result, tally: t })
          log(`round ${round + 1} ${LABELS[side]}: ${(t.created / result.seconds).toFixed(0)} punches/s`)
        }
        // The raw insert writes as many rows as the endpoint stored, in 500-row statements or
        // transactions, right after it: whatever load the machine had then, both saw it.
        const created = runs.cloud[runs.cloud.length - 1]?.tally.created ?? 0
        const r = await raw(Math.max(created, MAX_BATCH_PUNCHES))
        raws.push(r)
        log(`round ${round + 1} ${rawLabel}: ${r.rowsPerSecond.toFixed(0)} rows/s`)
      }
      await Promise.all(Object.values(servers).map((s) => s.stop()))
      for (const side of SIDES) stored[side] = await db(side).countPunches()
      if (dialect === 'sqlite') fsyncAfterMs = fsyncLatencyMs(tmpdir())
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()))
      for (const database of Object.values(databases)) await database.remove()
    }

    const problems: string[] = []
    const summary = (side: Side) => {
      const sum = (f: (r: SideRun) => number) => runs[side].reduce((acc, r) => acc + f(r), 0)
      const created = sum((r) => r.tally.created)
      const seconds = sum((r) => r.load.seconds)
      return {
        created,
        seconds,
        punchesPerSecond: created / seconds,
        requests: sum((r) => r.load.ok),
        non2xx: sum((r) => r.load.non2xx),
        errors: sum((r) => r.load.errors + r.load.timeouts),
        notCreated: sum((r) => r.tally.rejected + r.tally.duplicate),
        unreadable: sum((r) => r.tally.unreadable),
        p99Ms: Math.max(...runs[side].map((r) => r.load.latencyMs.p99)),
        errorSample: runs[side].find((r) => r.load.errorSample)?.load.errorSample,
      }
    }
    const s = { cloud: summary('cloud'), handWritten: summary('handWritten') }
    for (const side of SIDES) {
      const x = s[side]
      const label = LABELS[side]
      if (x.non2xx > 0)
        problems.push(`${label}: ${x.non2xx} non-2xx responses; first: ${x.errorSample?.slice(0, 300)}`)
      if (x.errors > 0) problems.push(`${label}: ${x.errors} connection errors or timeouts`)
      if (x.notCreated > 0) problems.push(`${label}: ${x.notCreated} punches came back rejected or duplicate`)
      if (x.unreadable > 0) problems.push(`${label}: ${x.unreadable} responses without a readable summary`)
      if (x.created !== x.requests * MAX_BATCH_PUNCHES)
        problems.push(`${label}: ${x.requests} batches answered but ${x.created} punches created`)
      const answered = x.created + warmup[side].created
      if ((stored[side] ?? 0) < answered)
        problems.push(`${label}: ${answered} punches created but only ${stored[side]} stored`)
    }
    const rawRows = raws.reduce((a, r) => a + r.rows, 0)
    const rawSeconds = raws.reduce((a, r) => a + r.seconds, 0)
    const rawPerSecond = rawRows / rawSeconds
    const notes = [
      dialect === 'sqlite'
        ? fsyncNote(fsyncBeforeMs, fsyncAfterMs)
        : 'PostgreSQL is local, synchronous_commit as the server has it (on by default).',
      ...SIDES.map(
        (side) =>
          `${LABELS[side]}: ${s[side].requests} batches (200), ${s[side].non2xx} non-2xx, ${s[side].errors} errors in ` +
          `${s[side].seconds.toFixed(1)} s; ${s[side].created} punches created; p99 ${s[side].p99Ms} ms per ` +
          `${MAX_BATCH_PUNCHES}-punch request; ${stored[side]} punches stored (warm-up included).`,
      ),
      `${rawLabel}: ${rawRows} rows in ${rawSeconds.toFixed(2)} s (punches only: no event, no day, no conflict handling, no HTTP).`,
    ]
    let profileSummary: string | undefined
    if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)
    const rate = (side: Side) => ({ label: LABELS[side], value: s[side].punchesPerSecond, unit: 'punches/s' })
    const rawMeasure = { label: rawLabel, value: rawPerSecond, unit: 'rows/s' }
    return {
      name,
      title,
      method:
        `POST ${PATH} with ${MAX_BATCH_PUNCHES} distinct valid punches per request, autocannon with ${CONNECTIONS} ` +
        `connections, ${settings.warmupSeconds} s warm-up each, then ${settings.rounds} rounds of ${settings.seconds} s ` +
        'per server in turned order, against two child processes, each with a database of its own ' +
        `(${dialect === 'sqlite' ? 'temporary SQLite file' : 'throwaway PostgreSQL schema'}, migrated by the product, ` +
        `${EMPLOYEES} ACTIVE employees): the Hajri cloud (buildApp, logger off) and a hand-written batch route ` +
        (dialect === 'sqlite'
          ? '(better-sqlite3 prepared statements, the whole batch in one transaction shared with the batches of the same ' +
            'event-loop turn, WAL synchronous=NORMAL, one shared fdatasync of the WAL before the answer, as the cloud: ' +
            'key with its tenant, employees, punches ON CONFLICT DO NOTHING, events, days). '
          : '(ONE unnamed statement a batch in autocommit: the key with its tenant, then INSERT ... SELECT FROM unnest of ' +
            'one array per column joined to the active employees ON CONFLICT DO NOTHING RETURNING, the events and the ' +
            'days of the rows inserted). ') +
        'Punches/s counts `created` from the response summaries. Raw baseline, after each round: as many rows as the ' +
        (dialect === 'sqlite'
          ? 'endpoint stored, better-sqlite3 prepared inserts in transactions of 500 into a freshly migrated file (WAL, ' +
            'synchronous=FULL, foreign_keys=ON).'
          : 'endpoint stored, multi-row INSERT ... VALUES of 500 rows (5,500 parameters) a statement in autocommit, ' +
            'one connection, into a schema of its own.'),
      startedAt: startedAt.toISOString(),
      elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
      figures: [
        {
          name: 'punches/s vs the hand-written route',
          value: rate('cloud'),
          baseline: rate('handWritten'),
          ratio: ratio(s.cloud.punchesPerSecond, s.handWritten.punchesPerSecond),
        },
        {
          name: 'punches/s vs the raw insert',
          value: rate('cloud'),
          baseline: rawMeasure,
          ratio: ratio(s.cloud.punchesPerSecond, rawPerSecond),
          ...(dialect === 'sqlite'
            ? { goal: { of: 'value' as const, op: '>=' as const, target: 50_000 } }
            : {}),
        },
        {
          name: 'hand-written route vs the raw insert',
          value: rate('handWritten'),
          baseline: rawMeasure,
          ratio: ratio(s.handWritten.punchesPerSecond, rawPerSecond),
        },
      ],
      problems,
      notes,
      appendix:
        profileSummary &&
        `CPU profile of the batch server (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
      details: { fsyncBeforeMs, fsyncAfterMs, runs, raws, warmup, stored },
    }
  }
}

export const batchIngestBench: Benchmark = { name: 'batch-ingest', run: batchRun('sqlite', 'batch-ingest') }
export const batchIngestPostgresBench: Benchmark = {
  name: 'batch-ingest-postgres',
  run: batchRun('postgres', 'batch-ingest-postgres'),
}
