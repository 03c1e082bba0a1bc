import { type CheckOutcome, type CheckResult, fail } from './check-result.js'

/** One check to run: its name and subject, and the work, which must stop when `signal` aborts. */
export interface DoctorCheck {
  check: string
  subject: string
  run(signal: AbortSignal): Promise<CheckOutcome>
}

/**
 * Runs every check at once (each one that depends on another awaits that one's memoized result,
 * doctor-plan.ts) and answers in the order given. Each check bounds its own steps with the step
 * timeout; `deadlineMs` bounds the whole run, so a check that hangs is reported as failed and the
 * command still ends: its signal is aborted so that it closes what it opened.
 */
export async function runDoctor(checks: readonly DoctorCheck[], deadlineMs: number): Promise<CheckResult[]> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), deadlineMs)
  })
  try {
    return await Promise.all(
      checks.map(async (c): Promise<CheckResult> => {
        const outcome = await Promise.race([
          c
            .run(controller.signal)
            .catch((err: unknown) =>
              fail(
                `the check itself failed: ${(err as Error).message}`,
                'report this as a bug of hajri-agent doctor',
              ),
            ),
          deadline,
        ])
        if (outcome === 'late') {
          return {
            check: c.check,
            subject: c.subject,
            ...fail(
              `no answer within ${Math.round(deadlineMs / 1000)} s`,
              'something on the way does not answer (a firewall dropping packets, a device that hangs): check the address and the network path',
            ),
          }
        }
        return { check: c.check, subject: c.subject, ...outcome }
      }),
    )
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
}
