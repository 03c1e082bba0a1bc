/**
 * The soak's output: a table on stdout (samples summarised per metric, the checks and the verdict)
 * and bench/results/soak.json in the shape of the benchmarks' results (test/bench/report.ts), so
 * the same readers can take it. Exits are the caller's business.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BenchResult, Figure } from '../bench/report.js'
import { machineInfo } from '../bench/report.js'
import type { Bound, Judgement } from './flatness.js'

export interface MetricReport {
  name: string
  unit: string
  bound: Bound
  judgement: Judgement
  /** The value once the load had stopped and everything drained. */
  after: number
}

export interface Check {
  name: string
  ok: boolean
  detail: string
}

const fmt = (n: number) => {
  if (!Number.isFinite(n)) return '–'
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

export function soakTable(
  metrics: readonly MetricReport[],
  checks: readonly Check[],
  samples: number,
): string {
  const metricRows = metrics.map((m) => {
    const j = m.judgement
    return [
      `${m.name} (${m.unit})`,
      fmt(j.first),
      fmt(j.last),
      fmt(j.median),
      j.statistic,
      fmt(j.secondThird),
      fmt(j.lastThird),
      `${j.slopePerHour >= 0 ? '+' : ''}${fmt(j.slopePerHour)}`,
      fmt(m.after),
      m.bound.kind === 'report' ? '–' : j.ok ? 'ok' : 'FAIL',
      j.reason,
    ]
  })
  const checkRows = checks.map((c) => [c.name, c.ok ? 'ok' : 'FAIL', c.detail])
  const failed = metrics.filter((m) => !m.judgement.ok).length + checks.filter((c) => !c.ok).length
  return [
    `Samples under load: ${samples}. first/last/median over the load; the second and last thirds by their median, or memory by its floor (10th percentile); slope per hour (Theil–Sen, of the rolling minimum for memory) after the warm-up; "after" once drained.`,
    table(
      [
        'metric',
        'first',
        'last',
        'median',
        'thirds by',
        '2nd third',
        'last third',
        'slope/h',
        'after',
        'verdict',
        'bound',
      ],
      metricRows,
    ),
    '',
    table(['check', 'verdict', 'detail'], checkRows),
    '',
    failed === 0 ? 'SOAK PASSED' : `SOAK FAILED: ${failed} failure(s)`,
  ].join('\n')
}

/** bench/results/soak.json, in the benchmarks' shape (figures: last third against second third). */
export async function writeSoakResult(
  directory: string,
  input: {
    startedAt: Date
    elapsedSeconds: number
    method: string
    metrics: readonly MetricReport[]
    checks: readonly Check[]
    notes: string[]
    details: Record<string, unknown>
  },
): Promise<string> {
  const figures: Figure[] = input.metrics.map((m) => ({
    name: `${m.name}: last third against second third`,
    value: {
      label: `${m.judgement.statistic} of the last third`,
      value: m.judgement.lastThird,
      unit: m.unit,
    },
    baseline: {
      label: `${m.judgement.statistic} of the second third`,
      value: m.judgement.secondThird,
      unit: m.unit,
    },
    ratio: m.judgement.secondThird === 0 ? Number.NaN : m.judgement.lastThird / m.judgement.secondThird,
  }))
  const result: BenchResult = {
    name: 'soak',
    title: 'Soak: steady load on the agent and the cloud',
    method: input.method,
    startedAt: input.startedAt.toISOString(),
    elapsedSeconds: input.elapsedSeconds,
    figures,
    problems: [
      ...input.metrics.filter((m) => !m.judgement.ok).map((m) => `${m.name}: ${m.judgement.reason}`),
      ...input.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
    ],
    notes: input.notes,
    details: {
      ...input.details,
      metrics: input.metrics,
      checks: input.checks,
    },
  }
  await mkdir(directory, { recursive: true })
  const path = join(directory, 'soak.json')
  await writeFile(
    path,
    `${JSON.stringify({ ...result, machine: machineInfo(), date: input.startedAt.toISOString() }, null, 2)}\n`,
  )
  return path
}
