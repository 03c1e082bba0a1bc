import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'

/** A number with its unit, e.g. 12,345 req/s. */
export interface Measure {
  label: string
  value: number
  unit: string
}

/** What a figure must reach: its ratio (or its value) compared with `target`. */
export interface Goal {
  of: 'ratio' | 'value'
  op: '>=' | '<='
  target: number
}

/**
 * One reported number. A benchmark reports, it never fails on speed
 * (docs/decisions/0032-speed-is-benchmarked.md): `goal` is shown next to the figure for a reader to judge.
 */
export interface Figure {
  name: string
  value: Measure
  baseline?: Measure
  /** value / baseline, both measured in this run. */
  ratio?: number
  goal?: Goal
}

export interface BenchResult {
  name: string
  title: string
  /** How it was measured, for whoever reads the JSON without the code. */
  method: string
  startedAt: string
  elapsedSeconds: number
  figures: Figure[]
  /**
   * Reasons the measurement is not what it claims to be (error responses, rows missing): such a
   * figure measured something else, so the run exits non-zero.
   */
  problems: string[]
  /** Counts and checks a reader needs to trust the figures (2xx and non-2xx, rows stored). */
  notes: string[]
  /** Longer markdown shown after the notes, e.g. a CPU profile summary. */
  appendix?: string
  details: Record<string, unknown>
}

export interface MachineInfo {
  os: string
  cpuModel: string
  cores: number
  node: string
  memoryGiB: number
  loadAverage: number[]
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus()
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    // The load when the run started: a busy neighbour makes every figure of the run suspect.
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  }
}

export function ratio(value: number, baseline: number): number {
  return baseline === 0 ? Number.NaN : value / baseline
}

export function goalMet(figure: Figure): boolean | undefined {
  const goal = figure.goal
  if (!goal) return undefined
  const actual = goal.of === 'ratio' ? figure.ratio : figure.value.value
  if (actual === undefined || !Number.isFinite(actual)) return false
  return goal.op === '>=' ? actual >= goal.target : actual <= goal.target
}

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
}

function formatMeasure(m: Measure | undefined): string {
  return m ? `${formatNumber(m.value)} ${m.unit} (${m.label})` : '–'
}

function formatGoal(figure: Figure): string {
  const goal = figure.goal
  if (!goal) return '–'
  const unit = goal.of === 'ratio' ? '' : ` ${figure.value.unit}`
  const subject = goal.of === 'ratio' ? 'ratio ' : ''
  return `${subject}${goal.op} ${formatNumber(goal.target)}${unit}: ${goalMet(figure) ? 'met' : 'NOT met'}`
}

export function summaryMarkdown(results: readonly BenchResult[], machine: MachineInfo, date: Date): string {
  const lines = [
    '# Hajri benchmarks',
    '',
    `- Date: ${date.toISOString()}`,
    `- Machine: ${machine.os}; ${machine.cpuModel}; ${machine.cores} cores; ${machine.memoryGiB} GiB; load average ${machine.loadAverage.join(' ')}`,
    `- Node: ${machine.node}`,
    '- Every ratio is to a baseline measured in the same run on the same machine.',
    '',
    '| figure | value | baseline | ratio | goal |',
    '| --- | --- | --- | --- | --- |',
  ]
  for (const result of results) {
    for (const figure of result.figures) {
      const r = figure.ratio === undefined ? '–' : figure.ratio.toFixed(3)
      lines.push(
        `| ${result.name}: ${figure.name} | ${formatMeasure(figure.value)} | ${formatMeasure(figure.baseline)} | ${r} | ${formatGoal(figure)} |`,
      )
    }
  }
  lines.push('')
  for (const result of results) {
    lines.push(`## ${result.title}`, '', result.method, '', `Took ${result.elapsedSeconds.toFixed(1)} s.`, '')
    for (const note of result.notes) lines.push(`- ${note}`)
    for (const problem of result.problems) lines.push(`- **Problem:** ${problem}`)
    if (result.notes.length + result.problems.length > 0) lines.push('')
    if (result.appendix) lines.push(result.appendix, '')
  }
  return lines.join('\n')
}

/** Writes bench/results/<name>.json per benchmark and bench/results/summary.md; returns the summary. */
export async function writeResults(
  directory: string,
  results: readonly BenchResult[],
  machine: MachineInfo,
  date: Date,
): Promise<string> {
  await mkdir(directory, { recursive: true })
  for (const result of results) {
    const figures = result.figures.map((f) => ({ ...f, goalMet: goalMet(f) }))
    await writeFile(
      join(directory, `${result.name}.json`),
      `${JSON.stringify({ ...result, figures, machine, date: date.toISOString() }, null, 2)}\n`,
    )
  }
  const summary = summaryMarkdown(results, machine, date)
  await writeFile(join(directory, 'summary.md'), `${summary}\n`)
  return summary
}
