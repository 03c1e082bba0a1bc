/**
 * `hajri-agent simulate --serial` on one end of a socat pseudo-terminal pair, a real agent
 * (Gateway, serial input with the real serialport bindings, spool on disk) on the other: every punch
 * written lands in the spool as the employee, direction and time printed, in each format the agent
 * reads from serial. Skipped with a reason without socat; failed under HAJRI_TEST_REQUIRE_ALL=1.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { SIMULATOR_CSV_COLUMNS } from '../../../agent/simulator/device-record.js'
import { socatAvailability } from '../../support/services.js'
import { startSocatPtyPair } from '../../support/socat-pty-pair.js'
import {
  cliInProcess,
  jsonPunchLines,
  punchKeys as keys,
  type SimulatorTestAgent,
  startSimulatorTestAgent,
  until,
} from './simulator-test-agent.js'

const socat = await socatAvailability()

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A serial device `main-door` on a new pty pair; the simulator writes to `hostPath`. */
async function agentOnPty(device: Record<string, unknown> = {}, serial: Record<string, unknown> = {}) {
  // The pair's links live in a directory of their own, made before the agent (which needs the path).
  const dir = await mkdtemp(join(tmpdir(), 'hajri-simulate-pty-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const pty = await startSocatPtyPair(dir)
  cleanups.push(() => pty.stop())
  const agent = await startSimulatorTestAgent({
    devices: [{ id: 'main-door', ...device, serial: { path: pty.devPath, baudRate: 9600, ...serial } }],
  })
  cleanups.push(() => agent.stop())
  await until(() => agent.gateway.status().devices[0]?.state === 'connected', 'the agent to open its end')
  return { agent, pty }
}

async function spooledOnce(agent: SimulatorTestAgent, count: number): Promise<SpooledPunch[]> {
  let punches: SpooledPunch[] = []
  await until(async () => {
    punches = await agent.punches()
    return punches.length >= count
  }, `${count} punches in the spool`)
  return punches
}

describe.skipIf(socat.skipReason !== undefined)(
  `simulate --serial on a socat pty pair${socat.skipReason ? ` (skipped: ${socat.skipReason})` : ''}`,
  () => {
    it('writes ATTLOG lines by default; every punch written is spooled', async () => {
      const { agent, pty } = await agentOnPty()
      const run = cliInProcess([
        'simulate',
        '--serial',
        pty.hostPath,
        '--employees',
        'E001,E002,E003',
        '--count',
        '24',
      ])
      expect(await run.done).toBe(0)
      const lines = run.stdout().trimEnd().split('\n')
      expect(lines).toHaveLength(25)
      const printed = lines.slice(0, 24).map((line) => {
        const m = /^sent (E00[123]) (IN|OUT) (\S+) \(written\)$/.exec(line)
        if (!m) throw new Error(`unexpected line ${line}`)
        return { employeeCode: m[1]!, punchType: m[2]!, punchedAt: m[3]! }
      })
      expect(lines[24]).toMatch(/^summary: 24 sent, 24 written in /)
      const spooled = await spooledOnce(agent, 24)
      expect(keys(spooled)).toEqual(keys(printed))
      expect(new Set(spooled.map((p) => p.id)).size).toBe(24)
      // Whole seconds, as ATTLOG has them, and the site's offset.
      expect(spooled.every((p) => /^\S+T\d\d:\d\d:\d\d\+05:30$/.test(p.punchedAt))).toBe(true)
      expect(await agent.deadLettered()).toEqual([])
    })

    it('writes CSV with the column map docs/site-agent/simulator.md gives, in the time zone the device has', async () => {
      const { agent, pty } = await agentOnPty(
        { timezone: 'UTC' },
        { format: 'csv', csv: { columns: { ...SIMULATOR_CSV_COLUMNS } } },
      )
      const run = cliInProcess([
        'simulate',
        '--serial',
        pty.hostPath,
        '--format',
        'csv',
        '--time-zone',
        'UTC',
        '--count',
        '10',
        '--json',
      ])
      expect(await run.done).toBe(0)
      const printed = jsonPunchLines(run.stdout())
      expect(printed).toHaveLength(10)
      expect(printed.every((p) => p.punchedAt.endsWith('Z'))).toBe(true)
      expect(keys(await spooledOnce(agent, 10))).toEqual(keys(printed))
      expect(await agent.deadLettered()).toEqual([])
    })

    it('writes JSON lines at a --rate, 115200 baud', async () => {
      const { agent, pty } = await agentOnPty({}, { format: 'json', baudRate: 115_200 })
      const run = cliInProcess([
        'simulate',
        '--serial',
        pty.hostPath,
        '--baud-rate',
        '115200',
        '--format',
        'json',
        '--rate',
        '200',
        '--count',
        '400',
        '--json',
      ])
      expect(await run.done).toBe(0)
      expect(JSON.parse(run.stdout().trimEnd().split('\n').at(-1) ?? '')).toMatchObject({
        event: 'summary',
        sent: 400,
        acknowledged: 400,
      })
      const spooled = await spooledOnce(agent, 400)
      expect(new Set(spooled.map((p) => p.id)).size).toBe(400)
      expect(await agent.deadLettered()).toEqual([])
    })

    it('stops with exit 1 when the port goes away, having counted what it wrote', async () => {
      const { agent, pty } = await agentOnPty()
      const run = cliInProcess(['simulate', '--serial', pty.hostPath, '--every', '1s'])
      await until(() => run.stdout().includes('(written)'), 'a first punch written')
      await spooledOnce(agent, 1)
      await pty.stop()
      expect(await run.done).toBe(1)
      const summary = run.stdout().trimEnd().split('\n').at(-1)
      expect(summary).toMatch(/^summary: (\d+) sent, (\d+) written in /)
      const [, sent, written] = /^summary: (\d+) sent, (\d+) written/.exec(summary ?? '') ?? []
      expect(Number(written)).toBeGreaterThanOrEqual(1)
      expect(Number(sent) - Number(written)).toBe(1)
      // EIO from the write, or serialport's disconnect first: either way, the port is named.
      expect(run.stderr()).toMatch(/^hajri-agent: .*serial port /m)
      expect(run.stderr()).toContain(`serial port ${pty.hostPath}`)
    })
  },
)
