import http from 'node:http'
import { formatTimestamp } from '../../shared/time.js'
import { median } from '../support/median.js'
import { createBenchDatabase } from './bench-database.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { httpGet } from './http-get.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/employees'
const LIMIT = 200

type Mode = 'full listing' | 'updatedSince sync'

interface Pass {
  /** Latency of page n at index n-1, ms. */
  pageMs: number[]
  problems: string[]
}

/**
 * Reads every page of one listing, following nextCursor, one request at a time as a syncing client
 * does, and checks that the listing is whole: each employee exactly once, sync in updatedAt order.
 */
async function paginate(
  agent: http.Agent,
  baseUrl: string,
  apiKey: string,
  mode: Mode,
  updatedSince: string,
  expected: number,
): Promise<Pass> {
  const headers = { authorization: `Bearer ${apiKey}` }
  const filter = mode === 'updatedSince sync' ? `&updatedSince=${encodeURIComponent(updatedSince)}` : ''
  const pageMs: number[] = []
  const problems: string[] = []
  const ids = new Set<string>()
  let lastUpdatedAt = ''
  let cursor: string | null = null
  do {
    const url: string = `${baseUrl}${PATH}?limit=${LIMIT}${filter}${cursor ? `&cursor=${cursor}` : ''}`
    const response = await httpGet(agent, url, headers)
    if (response.status !== 200) {
      problems.push(
        `${mode}: page ${pageMs.length + 1} answered ${response.status}: ${response.body.slice(0, 200)}`,
      )
      break
    }
    pageMs.push(response.ms)
    const page = JSON.parse(response.body) as {
      data: { id: string; updatedAt: string }[]
      nextCursor: string | null
    }
    for (const e of page.data) {
      ids.add(e.id)
      // Same-format UTC timestamps: string order is time order.
      if (mode === 'updatedSince sync' && e.updatedAt < lastUpdatedAt)
        problems.push(`${mode}: updatedAt went back at page ${pageMs.length}`)
      lastUpdatedAt = e.updatedAt
    }
    cursor = page.nextCursor
  } while (cursor !== null)
  if (ids.size !== expected)
    problems.push(`${mode}: ${ids.size} distinct employees listed, expected ${expected}`)
  return { pageMs, problems }
}

async function run(context: BenchContext): Promise<BenchResult> {
  const { settings, log } = context
  const startedAt = new Date()
  const seedStarted = performance.now()
  log(`loading ${settings.employees} employees (EmployeeService.upsert, 5,000 per transaction)`)
  const database = await createBenchDatabase(settings.employees)
  const seedSeconds = (performance.now() - seedStarted) / 1000
  // Before every change time of the tenant, so a sync from it lists everyone, like a first sync.
  const updatedSince = formatTimestamp(database.seededFrom - 1_000_000)
  const modes: Mode[] = ['full listing', 'updatedSince sync']
  const passes = new Map<Mode, Pass[]>(modes.map((m) => [m, []]))
  const problems: string[] = []
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const server = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url] })
    try {
      const read = (mode: Mode) =>
        paginate(agent, server.url, database.apiKey, mode, updatedSince, settings.employees)
      // One unmeasured pass per mode warms the JIT and SQLite's and the OS's caches.
      for (const mode of modes) problems.push(...(await read(mode)).problems)
      for (let i = 0; i < settings.syncPasses; i++) {
        for (const mode of modes) {
          const pass = await read(mode)
          passes.get(mode)?.push(pass)
          problems.push(...pass.problems)
          log(
            `pass ${i + 1} ${mode}: ${pass.pageMs.length} pages, median ${median(pass.pageMs).toFixed(2)} ms`,
          )
        }
      }
    } finally {
      agent.destroy()
      await server.stop()
    }
  } finally {
    await database.remove()
  }

  const pages = Math.ceil(settings.employees / LIMIT)
  const early = { from: 1, to: Math.min(10, Math.max(1, Math.floor(pages / 10))) }
  const late = { from: Math.max(1, Math.round(pages * 0.8)), to: pages }
  const pick = (mode: Mode, range: { from: number; to: number }) =>
    (passes.get(mode) ?? []).flatMap((p) => p.pageMs.slice(range.from - 1, range.to))
  const figures: Figure[] = []
  const perMode: Record<string, unknown> = {}
  for (const mode of modes) {
    const earlyMs = median(pick(mode, early))
    const lateMs = median(pick(mode, late))
    figures.push({
      name: `${mode}, late page latency`,
      value: { label: `median of pages ${late.from}-${late.to}`, value: lateMs, unit: 'ms' },
      baseline: { label: `median of pages ${early.from}-${early.to}`, value: earlyMs, unit: 'ms' },
      ratio: ratio(lateMs, earlyMs),
      goal: { of: 'ratio', op: '<=', target: 1.5 },
    })
    const all = (passes.get(mode) ?? []).flatMap((p) => p.pageMs)
    perMode[mode] = {
      earlyMs,
      lateMs,
      allPagesMedianMs: median(all),
      passes: (passes.get(mode) ?? []).map((p) => p.pageMs.map((ms) => Math.round(ms * 1000) / 1000)),
    }
  }

  return {
    name: 'employee-sync',
    title: 'Employee sync pagination (SQLite)',
    method:
      `${settings.employees} employees of one tenant loaded with EmployeeService.upsert, then GET ${PATH}?limit=${LIMIT} ` +
      'paged to the end by nextCursor, as a full listing and as ?updatedSince= (a first sync: every employee), over ' +
      'HTTP (keep-alive, one request at a time, timed from request to last body byte) against the Hajri cloud in a ' +
      `child process. One unmeasured pass per mode, then ${settings.syncPasses} measured passes per mode; a figure is ` +
      'the median over all passes of the pages in its range. Late page latency over early page latency shows ' +
      'whether paging slows down with depth (an OFFSET would).',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures,
    problems: [...new Set(problems)],
    notes: [
      `${pages} pages of ${LIMIT} per pass; loading the employees took ${seedSeconds.toFixed(1)} s ` +
        `(${Math.round(settings.employees / seedSeconds)} employees/s through EmployeeService.upsert).`,
    ],
    details: { seedSeconds, pages, early, late, perMode },
  }
}

export const employeeSyncBench: Benchmark = { name: 'employee-sync', run }
