/** What one doctor check found (docs/site-agent/doctor.md). */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip'

/** The outcome of a check, before the runner names it. */
export interface CheckOutcome {
  status: CheckStatus
  /** What was found, in a line: never a secret or a token. */
  detail: string
  /** What to do next: given with every failure and warning. */
  advice?: string
}

/** One line of the report: which check, on what, and its outcome. */
export interface CheckResult extends CheckOutcome {
  /** The kind of check, e.g. `cloud credentials`, `serial port`. */
  check: string
  /** What it was run on: a device id, an address, a directory. */
  subject: string
}

export const pass = (detail: string): CheckOutcome => ({ status: 'pass', detail })
export const warn = (detail: string, advice: string): CheckOutcome => ({ status: 'warn', detail, advice })
export const fail = (detail: string, advice: string): CheckOutcome => ({ status: 'fail', detail, advice })
export const skip = (detail: string): CheckOutcome => ({ status: 'skip', detail })

/** An error's message for a report line: its code when it has one, on one line. */
export function describeError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  const message = err instanceof Error ? err.message : String(err)
  const line = message.split('\n')[0] ?? ''
  return code && !line.includes(code) ? `${code}: ${line}` : line
}
