/**
 * `hajri-agent devices backfill` through a running agent (a real Gateway loaded from YAML, its ADMS
 * listener on a free port): the command is queued durably, handed to the terminal at its next poll,
 * and the terminal (the firmware model) uploads that period again, which is stored as ordinary
 * records. Refusals say why, and nothing is queued for them.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { AdmsDevice } from '../../../agent/simulator/adms-device.js'
import {
  cliInProcess,
  type SimulatorTestAgent,
  startSimulatorTestAgent,
  until,
} from '../simulator/simulator-test-agent.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function agentWithTerminal(): Promise<{ agent: SimulatorTestAgent; device: AdmsDevice }> {
  const agent = await startSimulatorTestAgent({
    adms: {},
    devices: [
      { id: 'canteen-face', adms: { serialNumber: 'CJDE193560303' } },
      { id: 'main-door', serial: { path: '/dev/hajri-test-no-such-port' } },
    ],
  })
  cleanups.push(() => agent.stop())
  const device = new AdmsDevice({
    url: agent.admsUrl as string,
    serialNumber: 'CJDE193560303',
    timeScale: 0.001,
  })
  cleanups.push(() => device.stop())
  await device.start()
  return { agent, device }
}

async function cli(agent: SimulatorTestAgent, args: string[]) {
  // The agent's own agent.yaml: where it listens, and its control token (in spool.dir).
  const run = cliInProcess(['devices', 'backfill', ...args, '--config', join(agent.dir, 'agent.yaml')])
  return { code: await run.done, stdout: run.stdout(), stderr: run.stderr() }
}

describe('hajri-agent devices backfill', () => {
  it("queues DATA QUERY ATTLOG for the period in the device's zone; the terminal uploads it again", async () => {
    const { agent, device } = await agentWithTerminal()
    for (const line of [
      '42\t2026-11-19 09:02:00\t0\t1\t0',
      '42\t2026-11-20 09:01:00\t0\t1\t0',
      '42\t2026-11-20 18:05:00\t1\t1\t0',
    ]) {
      await device.addLine(line)
    }
    expect(await agent.punches()).toHaveLength(3)
    const result = await cli(agent, ['canteen-face', '--from', '2026-11-20', '--to', '2026-11-20'])
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toMatch(
      /^queued command \d+ for canteen-face: DATA QUERY ATTLOG StartTime=2026-11-20 00:00:00 EndTime=2026-11-20 23:59:59\n/,
    )
    await until(async () => (await agent.punches()).length === 5, 'the period uploaded again')
    const again = (await agent.punches()).slice(3).map((p) => p.punchedAt)
    expect(again.sort()).toEqual(['2026-11-20T09:01:00+05:30', '2026-11-20T18:05:00+05:30'])
    await until(
      () =>
        agent.gateway
          .status()
          .devices.find((d) => d.id === 'canteen-face')
          ?.details?.commands.some((c) => c.kind === 'backfill' && c.state === 'done') ?? false,
      'the command reported done',
    )
  })

  it('refuses a device that cannot be asked, a device that does not exist, and a range that is not one', async () => {
    const { agent, device } = await agentWithTerminal()
    const serial = await cli(agent, ['main-door', '--from', '2026-11-20', '--to', '2026-11-21'])
    expect(serial).toMatchObject({ code: 1, stdout: '' })
    expect(serial.stderr).toBe(
      'hajri-agent: main-door cannot be asked for its records again: only ADMS push terminals can\n',
    )
    expect((await cli(agent, ['gate-9', '--from', '2026-11-20', '--to', '2026-11-21'])).stderr).toBe(
      'hajri-agent: no device gate-9 in the configuration\n',
    )
    expect((await cli(agent, ['canteen-face', '--from', '2026-11-21', '--to', '2026-11-20'])).stderr).toBe(
      'hajri-agent: from is after to\n',
    )
    expect(
      agent.gateway
        .status()
        .devices.find((d) => d.id === 'canteen-face')
        ?.details?.commands.filter((c) => c.kind === 'backfill'),
    ).toEqual([])
    expect(device.commandsReceived.every((c) => c.command === 'INFO')).toBe(true)
  })

  it('says how to call it, and that no agent answers when none does', async () => {
    const usage = cliInProcess(['devices', 'backfill', 'canteen-face'])
    expect(await usage.done).toBe(2)
    expect(usage.stderr()).toMatch(/needs --from and --to/)
    const none = cliInProcess([
      'devices',
      'backfill',
      'x',
      '--from',
      '2026-11-01',
      '--to',
      '2026-11-02',
      '--url',
      'http://127.0.0.1:9',
    ])
    expect(await none.done).toBe(1)
    expect(none.stderr()).toMatch(/^hajri-agent: no agent answers at http:\/\/127\.0\.0\.1:9/)
  })
})
