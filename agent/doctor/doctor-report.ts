import type { CheckResult, CheckStatus } from './check-result.js'

/** The whole run, as `--json` prints it. */
export interface DoctorReport {
  /** No check failed (warnings and skips do not count). */
  ok: boolean
  file: string
  counts: Record<CheckStatus, number>
  checks: CheckResult[]
}

export function doctorReport(file: string, checks: CheckResult[]): DoctorReport {
  const counts: Record<CheckStatus, number> = { pass: 0, warn: 0, fail: 0, skip: 0 }
  for (const c of checks) counts[c.status]++
  return { ok: counts.fail === 0, file, counts, checks }
}

/** Exit status: 0 when nothing failed, 1 when something did (2, a usage error, is main.ts's). */
export function doctorExitCode(report: DoctorReport): number {
  return report.ok ? 0 : 1
}

/**
 * For a person: one line per check (status, check, subject, what was found), the advice of a
 * failure or warning on the next line, and the counts last.
 */
export function renderDoctorReport(report: DoctorReport): string {
  const checkWidth = Math.max(...report.checks.map((c) => c.check.length), 0)
  const subjectWidth = Math.min(32, Math.max(...report.checks.map((c) => c.subject.length), 0))
  const lines = [`hajri-agent doctor: ${report.file}`, '']
  for (const c of report.checks) {
    lines.push(
      `${c.status.toUpperCase().padEnd(4)}  ${c.check.padEnd(checkWidth)}  ${c.subject.padEnd(subjectWidth)}  ${c.detail}`,
    )
    if (c.advice && (c.status === 'fail' || c.status === 'warn')) lines.push(`      -> ${c.advice}`)
  }
  const { pass, warn, fail, skip } = report.counts
  lines.push('', `${fail} failed, ${warn} warning(s), ${pass} passed, ${skip} skipped`)
  return `${lines.join('\n')}\n`
}
