import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { CheckResult } from '../../../agent/doctor/check-result.js'
import type { DoctorReport } from '../../../agent/doctor/doctor-report.js'
import type { CliResult } from '../../support/cli-capture.js'
import { unusedPort } from '../../support/unused-port.js'
import { runAgent } from '../commands/run-agent.js'

// biome-ignore lint/suspicious/noExplicitAny: test documents are edited freely.
export type Doc = Record<string, any>

/** A temporary directory with an agent.yaml in it; `remove` when done. */
export async function doctorDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-doctor-'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/**
 * A configuration with a cloud at a loopback port nothing listens on, a free status port, the
 * spool in `dir`, and one MQTT device on an embedded broker on a free port (nothing to fail), each
 * replaced by `overrides`.
 */
export async function writeConfig(dir: string, overrides: Doc = {}): Promise<string> {
  const doc: Doc = {
    site: { id: 'pune-plant-1' },
    cloud: {
      url: `http://127.0.0.1:${await unusedPort()}`,
      clientId: 'hjc_doctor',
      clientSecret: 'hjs_not-shown',
    },
    spool: { dir: join(dir, 'spool') },
    status: { listen: `127.0.0.1:${await unusedPort()}` },
    mqtt: { embedded: { host: '127.0.0.1', port: await unusedPort() } },
    devices: [{ id: 'door-1', mqtt: { topic: 'punches/door-1' } }],
    ...overrides,
  }
  const file = join(dir, 'agent.yaml')
  await writeFile(file, stringify(doc))
  return file
}

/** `hajri-agent doctor --config FILE [--json] ...`, in-process. */
export function doctor(dir: string, ...args: string[]): Promise<CliResult> {
  return runAgent(dir, {}, 'doctor', '--config', join(dir, 'agent.yaml'), '--timeout', '3', ...args)
}

/** The one check of that name (and subject), from a --json run. */
export function checkOf(result: CliResult, check: string, subject?: string): CheckResult {
  const report = result.json<DoctorReport>()
  const found = report.checks.filter(
    (c) => c.check === check && (subject === undefined || c.subject === subject),
  )
  if (found.length !== 1)
    throw new Error(`expected one "${check}" check, got ${JSON.stringify(report.checks)}`)
  return found[0] as CheckResult
}

/** The human line of a check: `FAIL  cloud credentials  <subject>  <detail>`, and the next line. */
export function humanLines(stdout: string, check: string): string[] {
  const lines = stdout.split('\n')
  const at = lines.findIndex((l) => new RegExp(`^(PASS|WARN|FAIL|SKIP)  ${check} `).test(l))
  if (at < 0) throw new Error(`no "${check}" line in:\n${stdout}`)
  return [lines[at] ?? '', lines[at + 1] ?? '']
}
