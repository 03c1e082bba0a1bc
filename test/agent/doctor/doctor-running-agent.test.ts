/**
 * `hajri-agent doctor` beside a running agent (a real `hajri-agent run` child process): its
 * listeners' ports are in use by it, which passes, and an ADMS terminal's pushes are read from its
 * status listener: not heard from yet, then heard from (the project's ADMS terminal simulator), then
 * skipped once the agent stops.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AdmsDevice } from '../../../agent/simulator/adms-device.js'
import { unusedPort } from '../../support/unused-port.js'
import { checkOf, doctor, doctorDir, humanLines, writeConfig } from './doctor-kit.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const SERIAL_NUMBER = 'CJDE193560303'

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 50))
}

describe('doctor beside a running agent', () => {
  let dir: Awaited<ReturnType<typeof doctorDir>>
  let agent: ChildProcess | undefined
  let statusPort: number
  let admsPort: number
  let brokerPort: number
  let device: AdmsDevice | undefined

  beforeAll(async () => {
    dir = await doctorDir()
    statusPort = await unusedPort()
    admsPort = await unusedPort()
    brokerPort = await unusedPort()
    const file = await writeConfig(dir.dir, {
      status: { listen: `127.0.0.1:${statusPort}` },
      mqtt: { embedded: { host: '127.0.0.1', port: brokerPort } },
      adms: { listen: `127.0.0.1:${admsPort}`, pollSeconds: 1 },
      devices: [
        { id: 'door-1', mqtt: { topic: 'punches/door-1' } },
        { id: 'canteen-face', adms: { serialNumber: SERIAL_NUMBER } },
      ],
      log: { level: 'silent' },
    })
    agent = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'agent/main.ts'), 'run', '--config', file],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH },
        stdio: 'ignore',
      },
    )
    await until(async () =>
      fetch(`http://127.0.0.1:${statusPort}/status`).then(
        (r) => r.ok,
        () => false,
      ),
    )
  })
  afterAll(async () => {
    await device?.stop()
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      const exited = once(agent, 'exit')
      agent.kill('SIGKILL')
      await exited
    }
    await dir.remove()
  })

  it('passes the ports the agent holds, and warns of a terminal it has not heard from yet', async () => {
    const json = await doctor(dir.dir, '--json')
    const pid = agent?.pid
    expect(checkOf(json, 'status port')).toMatchObject({
      status: 'pass',
      detail: `127.0.0.1:${statusPort} is in use by the running agent (site pune-plant-1, pid ${pid})`,
    })
    expect(checkOf(json, 'embedded broker port')).toMatchObject({
      status: 'pass',
      detail: expect.stringContaining('in use by the running agent'),
    })
    expect(checkOf(json, 'adms listener port').status).toBe('pass')
    expect(checkOf(json, 'adms terminal', 'canteen-face')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining(`SN ${SERIAL_NUMBER} has not spoken yet`),
    })
  })

  it('passes a terminal that has pushed to the agent', async () => {
    device = new AdmsDevice({
      url: `http://127.0.0.1:${admsPort}`,
      serialNumber: SERIAL_NUMBER,
      timeScale: 0.01,
    })
    await device.start()
    await device.punch({ pin: 'E0042', status: 0 })
    const human = await doctor(dir.dir)
    expect(humanLines(human.stdout, 'adms terminal')[0]).toMatch(
      new RegExp(
        `^PASS  adms terminal +canteen-face +SN ${SERIAL_NUMBER} last spoke \\d+ s ago, last upload 20`,
      ),
    )
  })

  it('skips the terminal, saying why, once the agent is not running, and finds the ports free', async () => {
    const exited = once(agent as ChildProcess, 'exit')
    agent?.kill('SIGTERM')
    await exited
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'adms terminal')).toMatchObject({
      status: 'skip',
      detail: expect.stringMatching(
        /^the agent is not running \(nothing answers at http:\/\/127\.0\.0\.1:\d+/,
      ),
    })
    expect(checkOf(json, 'status port').detail).toContain('is free')
    expect(checkOf(json, 'embedded broker port').detail).toContain('is free')
  })
})
