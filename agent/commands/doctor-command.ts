import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { CheckResult } from '../doctor/check-result.js'
import { checkConfig } from '../doctor/config-check.js'
import { planDoctor, skippedWithoutConfig } from '../doctor/doctor-plan.js'
import { doctorExitCode, doctorReport, renderDoctorReport } from '../doctor/doctor-report.js'
import { runDoctor } from '../doctor/run-doctor.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'

const DEFAULT_TIMEOUT_SECONDS = 5
/** The longest chain of steps a check waits on (cloud address, connection, token), plus one. */
const DEADLINE_STEPS = 4

/**
 * `hajri-agent doctor --config agent.yaml [--json] [--timeout SECONDS]`: checks what stops a site
 * working (docs/site-agent/doctor.md), each check PASS, WARN, FAIL or SKIP with what to do on a
 * failure. Exit status 0 when nothing failed, 1 when something did, 2 on a usage error.
 */
export const doctorCommand: AgentCommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      config: { type: 'string', short: 'c' },
      json: { type: 'boolean', default: false },
      timeout: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  })
  if (positionals.length > 0) {
    throw new AgentUsageError(`doctor takes no operand (got "${positionals[0]}"); use --config FILE`)
  }
  if (values.config === undefined || values.config === '')
    throw new AgentUsageError('doctor needs --config FILE')
  const timeoutSeconds = values.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(values.timeout)
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 60) {
    throw new AgentUsageError(`--timeout takes whole seconds from 1 to 60 (got "${values.timeout}")`)
  }
  const timeoutMs = timeoutSeconds * 1000
  const file = resolve(io.cwd, values.config)
  const loaded = await checkConfig(file, io.env)
  const results: CheckResult[] = [{ check: 'configuration', subject: file, ...loaded.outcome }]
  if (loaded.config)
    results.push(...(await runDoctor(planDoctor(loaded.config, timeoutMs), DEADLINE_STEPS * timeoutMs)))
  else results.push(...skippedWithoutConfig())
  const report = doctorReport(file, results)
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorReport(report))
  return doctorExitCode(report)
}
