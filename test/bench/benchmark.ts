import type { BenchSettings } from './bench-settings.js'
import type { BenchResult } from './report.js'

export interface BenchContext {
  settings: BenchSettings
  /** bench/results at the repository root. */
  resultsDirectory: string
  /** Progress, on stderr: stdout carries the summary. */
  log(message: string): void
}

export interface Benchmark {
  name: string
  run(context: BenchContext): Promise<BenchResult>
}
