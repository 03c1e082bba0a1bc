import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { agentAdmsBench } from './agent-adms.bench.js'
import { agentDrainBench } from './agent-drain.bench.js'
import { agentIdleBench } from './agent-idle.bench.js'
import { agentIngestBench } from './agent-ingest.bench.js'
import { agentRecoveryBench } from './agent-recovery.bench.js'
import { agentZkReadBench } from './agent-zk-read.bench.js'
import { attendanceIncrementalBench } from './attendance-incremental.bench.js'
import { attendanceRecomputeBench } from './attendance-recompute.bench.js'
import { authenticatedRouteBench, authenticatedRoutePostgresBench } from './authenticated-route.bench.js'
import { batchIngestBench, batchIngestPostgresBench } from './batch-ingest.bench.js'
import { readBenchSettings } from './bench-settings.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { employeeSyncBench } from './employee-sync.bench.js'
import { writeFiguresFile } from './figures-file.js'
import { punchEndpointBench, punchEndpointPostgresBench } from './punch-endpoint.bench.js'
import { type BenchResult, machineInfo, writeResults } from './report.js'
import { webhookDeliveryBench } from './webhook-delivery.bench.js'
import { webhookLatencyBench } from './webhook-latency.bench.js'

/**
 * `npm run bench`: runs the benchmarks one after another (never two at once: they would measure
 * each other), writes bench/results/<name>.json and summary.md, and prints the summary. With
 * `-- --figures FILE` (docs/development/figures.md) it also rewrites the benchmark part of that
 * file, with the date and machine, so the docs' figures come from a run rather than prose. Exits
 * non-zero only when a benchmark broke or measured something else than it claims (error
 * responses, missing rows), never because a figure misses its goal (docs/decisions/0032-speed-is-benchmarked.md).
 */
const BENCHMARKS: Benchmark[] = [
  punchEndpointBench,
  punchEndpointPostgresBench,
  batchIngestBench,
  batchIngestPostgresBench,
  employeeSyncBench,
  authenticatedRouteBench,
  authenticatedRoutePostgresBench,
  agentIngestBench,
  agentAdmsBench,
  agentDrainBench,
  agentIdleBench,
  agentRecoveryBench,
  agentZkReadBench,
  webhookDeliveryBench,
  webhookLatencyBench,
  attendanceRecomputeBench,
  attendanceIncrementalBench,
]

const { values: options } = parseArgs({ options: { figures: { type: 'string' } }, strict: true })
const settings = readBenchSettings()
const unknown = settings.only.filter((name) => !BENCHMARKS.some((b) => b.name === name))
if (unknown.length > 0) {
  throw new Error(
    `HAJRI_BENCH_ONLY names no benchmark: ${unknown.join(', ')} (there are ${BENCHMARKS.map((b) => b.name).join(', ')})`,
  )
}
const selected = BENCHMARKS.filter((b) => settings.only.length === 0 || settings.only.includes(b.name))
const resultsDirectory = fileURLToPath(new URL('../../bench/results/', import.meta.url))
const machine = machineInfo()
const date = new Date()
const started = performance.now()

const results: BenchResult[] = []
for (const bench of selected) {
  const context: BenchContext = {
    settings,
    resultsDirectory,
    log: (message) => process.stderr.write(`[${bench.name}] ${message}\n`),
  }
  context.log('starting')
  const benchStarted = performance.now()
  try {
    results.push(await bench.run(context))
  } catch (err) {
    // One broken benchmark still leaves the others' figures to read.
    results.push({
      name: bench.name,
      title: bench.name,
      method: 'The benchmark failed before it could report.',
      startedAt: new Date().toISOString(),
      elapsedSeconds: (performance.now() - benchStarted) / 1000,
      figures: [],
      problems: [`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`],
      notes: [],
      details: {},
    })
  }
  context.log(`done in ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`)
}

const summary = await writeResults(resultsDirectory, results, machine, date)
process.stdout.write(`${summary}\n`)
if (options.figures !== undefined) {
  // npm runs scripts from the package root, so a relative path is relative to it.
  const figuresPath = resolve(options.figures)
  await writeFiguresFile(figuresPath, results, machine, date)
  process.stdout.write(`Figures written to ${figuresPath}\n`)
}
process.stdout.write(
  `Total ${((performance.now() - started) / 1000).toFixed(1)} s; results in ${resultsDirectory}\n`,
)
if (results.some((r) => r.problems.length > 0)) {
  process.stderr.write('Some benchmarks report problems: their figures do not measure what they claim.\n')
  process.exitCode = 1
}
