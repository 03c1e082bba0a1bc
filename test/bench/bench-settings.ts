/**
 * How long and how big the benchmarks are. The defaults keep `npm run bench` to about three minutes
 * on two cores; the variables shorten a run while working on a benchmark (or lengthen it for a
 * steadier figure).
 */
export interface BenchSettings {
  /** HAJRI_BENCH_SECONDS: measured seconds of each load run. */
  seconds: number
  /** HAJRI_BENCH_WARMUP_SECONDS: unmeasured load before measuring, so the JIT and caches are warm. */
  warmupSeconds: number
  /** HAJRI_BENCH_ROUNDS: alternating baseline/subject rounds, so drift on a shared machine hits both. */
  rounds: number
  /** HAJRI_BENCH_EMPLOYEES: employees of the sync benchmark's tenant. */
  employees: number
  /** HAJRI_BENCH_SYNC_PASSES: full paginations per listing mode. */
  syncPasses: number
  /** HAJRI_BENCH_ONLY: comma-separated benchmark names; all when empty. */
  only: string[]
  /** HAJRI_BENCH_CPU_PROF=1: run the servers under test with --cpu-prof (timings are then perturbed). */
  cpuProfile: boolean
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

export function readBenchSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  return {
    seconds: positive(env, 'HAJRI_BENCH_SECONDS', 8),
    warmupSeconds: positive(env, 'HAJRI_BENCH_WARMUP_SECONDS', 3),
    rounds: Math.round(positive(env, 'HAJRI_BENCH_ROUNDS', 2)),
    employees: Math.round(positive(env, 'HAJRI_BENCH_EMPLOYEES', 100_000)),
    syncPasses: Math.round(positive(env, 'HAJRI_BENCH_SYNC_PASSES', 3)),
    only: (env.HAJRI_BENCH_ONLY ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    cpuProfile: env.HAJRI_BENCH_CPU_PROF === '1',
  }
}
