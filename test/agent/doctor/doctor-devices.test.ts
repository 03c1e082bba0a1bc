/**
 * `hajri-agent doctor`'s device checks against real components: a socat pseudo-terminal pair as
 * a serial port, Mosquitto and an aedes broker that checks passwords as the site broker, and the
 * project's ZK terminal emulator on a loopback port.
 */
import net from 'node:net'
import { join } from 'node:path'
import { Aedes } from 'aedes'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ZkDevice } from '../../../agent/simulator/zk-device/zk-device.js'
import { MOSQUITTO_URL, mosquittoAvailability, socatAvailability } from '../../support/services.js'
import { startSocatPtyPair } from '../../support/socat-pty-pair.js'
import { unusedPort } from '../../support/unused-port.js'
import { checkOf, doctor, doctorDir, humanLines, writeConfig } from './doctor-kit.js'

let dir: Awaited<ReturnType<typeof doctorDir>>
const cleanups: (() => Promise<unknown>)[] = []
beforeAll(async () => {
  dir = await doctorDir()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(() => dir.remove())

const socat = await socatAvailability()
const mosquitto = await mosquittoAvailability()

describe.skipIf(socat.skipReason !== undefined)('serial port (socat pty pair)', () => {
  it('passes for a port that opens, and fails with advice for one that is not there', async () => {
    const pair = await startSocatPtyPair(dir.dir)
    cleanups.push(() => pair.stop())
    const missing = join(dir.dir, 'ttyUSB9')
    await writeConfig(dir.dir, {
      devices: [
        { id: 'gate-serial', serial: { path: pair.devPath, baudRate: 19200 } },
        { id: 'unplugged', serial: { path: missing } },
      ],
    })
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(1)
    expect(checkOf(json, 'serial port', 'gate-serial')).toMatchObject({
      status: 'pass',
      detail: `${pair.devPath} opens at 19200 baud`,
    })
    expect(checkOf(json, 'serial port', 'unplugged')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`${missing} does not exist`),
      advice: expect.stringContaining('is the adapter plugged in?'),
    })
    // Closed again at once: the agent (here, a second run) can open it.
    const again = await doctor(dir.dir, '--json')
    expect(checkOf(again, 'serial port', 'gate-serial').status).toBe('pass')
  })
})

describe.skipIf(mosquitto.skipReason !== undefined)('external MQTT broker (Mosquitto)', () => {
  it('passes when the broker accepts a connection', async () => {
    await writeConfig(dir.dir, {
      mqtt: { external: { url: MOSQUITTO_URL, clientId: 'hajri-doctor-test' } },
    })
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'mqtt broker')).toMatchObject({
      status: 'pass',
      detail: expect.stringContaining('accepts a connection'),
    })
  })
})

describe('external MQTT broker (aedes, with passwords)', () => {
  async function siteBroker() {
    const broker = new Aedes()
    const clientIds: string[] = []
    broker.authenticate = (client, username, password, done) => {
      clientIds.push(client.id)
      done(null, username === 'site-agent' && password?.toString() === 'right-password')
    }
    await broker.listen()
    const server = net.createServer(broker.handle)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()))
      await new Promise<void>((resolve) => server.close(() => resolve()))
    })
    const port = (server.address() as net.AddressInfo).port
    return { url: `mqtt://127.0.0.1:${port}`, clientIds }
  }

  it('passes with the right password, fails with a wrong one, and never takes the agent’s client id', async () => {
    const { url, clientIds } = await siteBroker()
    const external = { url, clientId: 'plant-agent', username: 'site-agent' }
    await writeConfig(dir.dir, { mqtt: { external: { ...external, password: 'right-password' } } })
    const good = await doctor(dir.dir, '--json')
    expect(checkOf(good, 'mqtt broker')).toMatchObject({
      status: 'pass',
      detail: `${url} accepts a connection as site-agent`,
    })
    await writeConfig(dir.dir, { mqtt: { external: { ...external, password: 'wrong-password' } } })
    const bad = await doctor(dir.dir)
    expect(bad.code).toBe(1)
    const [line, advice] = humanLines(bad.stdout, 'mqtt broker')
    expect(line).toMatch(/^FAIL .* refuses the credentials/)
    expect(advice).toContain('mqtt.external.username and password')
    expect(bad.stdout).not.toContain('wrong-password')
    // A CONNECT with the agent's own client id would close the agent's session (MQTT 3.1.1 §3.1.4).
    expect(clientIds).toHaveLength(2)
    for (const id of clientIds) expect(id).toMatch(/^plant-agent-doctor-[0-9a-f]{8}$/)
  })

  it('fails when no broker listens there', async () => {
    const url = `mqtt://127.0.0.1:${await unusedPort()}`
    await writeConfig(dir.dir, { mqtt: { external: { url, clientId: 'plant-agent' } } })
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'mqtt broker')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('does not accept a connection'),
    })
  })
})

describe('ZK terminal (the terminal emulator)', () => {
  async function terminal(options: { commKey?: number } = {}) {
    // One session at a time, as real terminals: a session left open would make the next refused.
    const device = new ZkDevice({
      time: '2026-11-26T09:00:00',
      serialNumber: 'CEXF212360012',
      faults: { refuseSecondSession: true },
      ...options,
    })
    const port = await device.start()
    cleanups.push(() => device.stop())
    return { device, port }
  }

  it('passes for a terminal that answers, reading its serial number and clock, and closes the session', async () => {
    const { device, port } = await terminal()
    await writeConfig(dir.dir, {
      devices: [{ id: 'zk-gate', zk: { host: '127.0.0.1', port, transport: 'tcp' } }],
    })
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'zk terminal', 'zk-gate')).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(
        /answers \(SN CEXF212360012, .*over tcp\); its clock reads 2026-11-26[T ]09:0/,
      ),
    })
    // The session was ended: the emulator, which takes one at a time, takes the next.
    const again = await doctor(dir.dir, '--json')
    expect(checkOf(again, 'zk terminal', 'zk-gate').status).toBe('pass')
    expect(device.stats.sessionsRefused).toBe(0)
  })

  it('fails with the comm key advice when the terminal refuses the key, and fails where none answers', async () => {
    const { port } = await terminal({ commKey: 1234 })
    const closed = await unusedPort()
    await writeConfig(dir.dir, {
      devices: [
        { id: 'zk-keyed', zk: { host: '127.0.0.1', port, transport: 'tcp', commKey: 999 } },
        { id: 'zk-off', zk: { host: '127.0.0.1', port: closed, transport: 'tcp' } },
      ],
    })
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(1)
    expect(checkOf(json, 'zk terminal', 'zk-keyed')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('zk_auth_refused'),
      advice: expect.stringContaining('zk.commKey'),
    })
    expect(checkOf(json, 'zk terminal', 'zk-off')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('zk_unreachable'),
    })
  })
})
