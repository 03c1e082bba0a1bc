/**
 * A durability test (docs/decisions/0024-ack-after-fsync.md): hajri-agent runs as a real child process
 * (`node --import tsx agent/main.ts run --config ...`) in front of a real cloud (TestCloud, listening
 * on a port, reached through a TCP proxy that can cut it off). A device played by mqtt.js streams
 * QoS 1 punches into the agent's embedded broker while the agent forwards them, and the agent is
 * killed with SIGKILL at random moments, 50 times, plus more during a cloud outage. A
 * punch is PUBACKed only once it is fsynced in the spool, a chunk is deleted only once the cloud has
 * every punch in it, and the punch id (externalId, Idempotency-Key) makes every resend harmless. So:
 * every PUBACKed punch reaches the cloud exactly once, and nothing reaches it that was not published.
 * The serial half does the same for a port that disappears and comes back (socat pty pair, real
 * serialport bindings; skipped with a reason without socat, failed under HAJRI_TEST_REQUIRE_ALL=1).
 *
 * The seed of the kill moments is printed with the counts; HAJRI_E2E_SEED=<n> replays its choices
 * (the timing around them is the machine's). HAJRI_E2E_KEEP=1 keeps the temporary directory (the
 * agent's log of every run, its spool); HAJRI_E2E_DATABASE=postgres uses PostgreSQL for the cloud.
 */
import { type FileHandle, open, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { AgentProcess, writeAgentConfig } from '../../support/agent-process.js'
import type { DatabaseKind } from '../../support/cloud-harness.js'
import {
  agentStatus,
  freePort,
  printTable,
  seededRandom,
  sleep,
  waitFor,
  withTimeout,
} from '../../support/e2e-kit.js'
import { median } from '../../support/median.js'
import { MqttPunchDevice } from '../../support/mqtt-punch-device.js'
import { postgresAvailability, socatAvailability } from '../../support/services.js'
import { startSocatPtyPair } from '../../support/socat-pty-pair.js'
import { DurabilityRig, type StoredPunch } from './durability-rig.js'

const socat = await socatAvailability()

/**
 * SQLite by default (a fresh file per run); HAJRI_E2E_DATABASE=postgres runs the same against the test
 * PostgreSQL (HAJRI_TEST_POSTGRES_URL), whose unique index and transactions are the other dedupe path.
 */
const DATABASE: DatabaseKind = process.env.HAJRI_E2E_DATABASE === 'postgres' ? 'postgres' : 'sqlite'
if (DATABASE === 'postgres') {
  const postgres = await postgresAvailability()
  if (postgres.skipReason) throw new Error(`HAJRI_E2E_DATABASE=postgres but ${postgres.skipReason}`)
}

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)
/** Killed (SIGKILL) at random points, 50 times, with the cloud up... */
const KILLS_CLOUD_UP = 50
/** ...and "the same holds across a cloud outage": a few more while the cloud cannot be reached. */
const KILLS_CLOUD_DOWN = 5

const MQTT_DEVICE = 'gate-1'
const SERIAL_DEVICE = 'main-door'

describe(`hajri-agent durability: a child process killed with SIGKILL [${DATABASE}]`, () => {
  const rig = new DurabilityRig(DATABASE)
  const { cleanups } = rig
  const setUpTenant = (codes: readonly string[]) => rig.setUpTenant(codes)
  const storedPunches = (tenantId: string) => rig.storedPunches(tenantId)
  const startProxy = () => rig.startProxy()

  const tempDir = () => rig.tempDir()

  /** What was sent against what the cloud stored: the numbers that must hold. */
  function audit(
    sent: { employeeCode: string; punchType: 'IN' | 'OUT'; punchedAtMs: number; mustArrive: boolean }[],
    deviceId: string,
    rows: StoredPunch[],
  ) {
    const key = (code: string, micros: number) => `${code}@${micros}`
    const byKey = new Map<string, number>()
    const byExternalId = new Map<string, number>()
    for (const row of rows) {
      const k = key(row.employee_code, row.punched_at)
      byKey.set(k, (byKey.get(k) ?? 0) + 1)
      byExternalId.set(row.external_id ?? '', (byExternalId.get(row.external_id ?? '') ?? 0) + 1)
    }
    const sentByKey = new Map(sent.map((p) => [key(p.employeeCode, p.punchedAtMs * 1000), p]))
    const lost: string[] = []
    for (const p of sent) {
      if (!p.mustArrive) continue
      const k = key(p.employeeCode, p.punchedAtMs * 1000)
      const id = punchId(deviceId, p.employeeCode, p.punchedAtMs * 1000, p.punchType)
      if ((byKey.get(k) ?? 0) === 0 || (byExternalId.get(id) ?? 0) === 0) lost.push(`${k} (${id})`)
    }
    const duplicates = [...byKey].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`)
    duplicates.push(...[...byExternalId].filter(([, n]) => n > 1).map(([id, n]) => `externalId ${id} x${n}`))
    // Stored, but never sent, or stored as something else than what was sent.
    const strangers = rows
      .filter((row) => {
        const p = sentByKey.get(key(row.employee_code, row.punched_at))
        return (
          !p ||
          row.punch_type !== p.punchType ||
          row.device_id !== deviceId ||
          row.external_id !== punchId(deviceId, p.employeeCode, p.punchedAtMs * 1000, p.punchType)
        )
      })
      .map((row) => JSON.stringify(row))
    return { lost, duplicates, strangers }
  }

  it(`MQTT QoS 1: every PUBACKed punch reaches the cloud exactly once across ${KILLS_CLOUD_UP} SIGKILLs and a cloud outage with ${KILLS_CLOUD_DOWN} more`, {
    timeout: 240_000,
  }, async () => {
    const startedAt = Date.now()
    const dir = await tempDir()
    const codes = Array.from({ length: 40 }, (_, i) => `E${String(i + 1).padStart(3, '0')}`)
    const { tenantId, clientId, clientSecret } = await setUpTenant(codes)
    const proxy = await startProxy()
    const mqttPort = await freePort()
    const statusPort = await freePort()
    const configPath = join(dir, 'agent.yaml')
    const spoolDir = join(dir, 'spool')
    await writeAgentConfig(configPath, {
      siteId: 'e2e-mqtt',
      cloudUrl: `http://127.0.0.1:${proxy.port}`,
      clientId,
      clientSecretEnv: 'HAJRI_E2E_CLIENT_SECRET',
      spoolDir,
      // Small chunks and several requests at once: many chunk files written and deleted, chunks
      // finishing out of order, so the kills land on every step of a chunk's life.
      chunkPunches: 20,
      concurrency: 4,
      // A black-holed cloud is noticed in 3 s rather than the default 15.
      timeoutSeconds: 3,
      statusPort,
      mqtt: {
        port: mqttPort,
        username: 'gate-1',
        passwordEnv: 'HAJRI_E2E_MQTT_PASSWORD',
        topic: 'punches/gate-1',
        deviceId: MQTT_DEVICE,
      },
    })
    const agent = new AgentProcess({
      configPath,
      env: { HAJRI_E2E_CLIENT_SECRET: clientSecret, HAJRI_E2E_MQTT_PASSWORD: 'gate-1-secret' },
      logPath: join(dir, 'agent.log'),
    })
    cleanups.push(() => agent.dispose())
    await agent.start()

    const device = new MqttPunchDevice({
      url: `mqtt://127.0.0.1:${mqttPort}`,
      clientId: 'e2e-gate-1',
      username: 'gate-1',
      password: 'gate-1-secret',
      topic: 'punches/gate-1',
      employeeCodes: codes,
      // Whole seconds in the recent past: inside the cloud's backfill window, never "in the future".
      firstPunchMs: Math.floor(Date.now() / 1000) * 1000 - 20 * 3600_000,
      perTick: 2,
      tickMs: 5,
      maxOutstanding: 60,
    })
    cleanups.push(() => device.end())
    await withTimeout(device.connectedAfter(0), 30_000, 'the device to connect')
    device.startStreaming()

    const random = seededRandom(SEED)
    type KillMode = 'streaming' | 'reconnect' | 'startup'
    /**
     * Where a kill lands: mostly 50–400 ms into streaming (spool writes, PUBACKs, forwarding,
     * chunk deletions); some within 150 ms of "running" (the device replaying its unacknowledged
     * punches, the first token, the recovered spool's first requests); some before the agent is
     * even running (opening the spool, clearing what the previous kill left half-written).
     */
    const chooseMode = (): KillMode => {
      const r = random()
      return r < 0.7 ? 'streaming' : r < 0.9 ? 'reconnect' : 'startup'
    }
    const kills: { n: number; mode: KillMode; cloud: string; halfWritten: number }[] = []
    const total = KILLS_CLOUD_UP + KILLS_CLOUD_DOWN
    const outageFirst = KILLS_CLOUD_UP / 2 + 1
    const outageLast = outageFirst + KILLS_CLOUD_DOWN - 1
    let cloudState: 'up' | 'blackhole' | 'refused' = 'up'
    let outage: { backlog: number; lastError: string; storedBefore: number; storedAfter: number } | undefined
    let storedAtOutage = 0
    let mode: KillMode = 'streaming'
    // The device's first connection was to this first process.
    let connectionsAtSpawn = 0
    let spawnedAt = Date.now()
    /** Spawn to "hajri-agent running", and spawn to the device's 'connect' (its backlog replayed). */
    const startupMs: number[] = []
    const reconnectMs: number[] = []
    let drainMs: number | undefined
    let drained: AgentStatus | undefined
    let rows: StoredPunch[] = []
    let result: ReturnType<typeof audit> = { lost: [], duplicates: [], strangers: [] }

    try {
      for (let n = 1; n <= total; n++) {
        // The outage, in the middle: first a dead link (connections hang), then a host that refuses.
        if (n === outageFirst) {
          storedAtOutage = (await storedPunches(tenantId)).length
          await proxy.cut('blackhole')
          cloudState = 'blackhole'
        } else if (n === outageFirst + 2) {
          // The dead link must have been tried before the host starts refusing: a kill can land before
          // the process alive then retries (its backoff after the dropped connection), so wait here
          // rather than leave the black hole untested by chance.
          await waitFor(() => proxy.connections.blackholed > 0, 'the agent to try the black-holed cloud')
          await proxy.cut('refuse')
          cloudState = 'refused'
        }

        if (mode === 'startup') {
          await sleep(Math.max(0, Math.floor(random() * 900) - (Date.now() - spawnedAt)))
        } else if (mode === 'reconnect') {
          await sleep(Math.floor(random() * 150))
        } else {
          const afterMs = 50 + Math.floor(random() * 350)
          await withTimeout(
            device.connectedAfter(connectionsAtSpawn),
            30_000,
            `the device to reconnect (kill ${n})`,
          )
          reconnectMs.push(Date.now() - spawnedAt)
          await sleep(afterMs)
        }
        await agent.kill()
        // A chunk file being written when the kill came (its .tmp, never renamed into place).
        const halfWritten = (await readdir(spoolDir).catch(() => [])).filter((f) => f.endsWith('.tmp')).length
        kills.push({ n, mode, cloud: cloudState, halfWritten })

        // The next process: same configuration, spool and ports, as a service manager restarts it.
        mode = n === total || n === outageLast ? 'streaming' : chooseMode()
        connectionsAtSpawn = device.connections
        spawnedAt = Date.now()
        if (mode === 'startup') agent.spawn()
        else {
          await agent.start()
          startupMs.push(Date.now() - spawnedAt)
        }

        if (n === outageLast) {
          // Before the cloud comes back: the agent has noticed, and holds punches it could not send.
          const seen = await waitFor(async () => {
            const s = await agentStatus(statusPort)
            return s?.forwarding.lastError && s.spool.punches > 0 ? s : undefined
          }, 'the agent to report the outage with punches waiting')
          outage = {
            backlog: seen.spool.punches,
            lastError: seen.forwarding.lastError?.message ?? '',
            storedBefore: storedAtOutage,
            storedAfter: (await storedPunches(tenantId)).length,
          }
          await proxy.restore()
          cloudState = 'up'
        }
      }

      // Drain: the device stops making punches and is acknowledged for all it has; the agent
      // forwards everything and is stopped cleanly.
      device.stopStreaming()
      const drainStartedAt = Date.now()
      await waitFor(() => device.outstanding === 0, 'every published punch to be PUBACKed', {
        describe: () => ({ outstanding: device.outstanding, connected: device.connected }),
      })
      let last: AgentStatus | undefined
      drained = await waitFor(
        async () => {
          last = await agentStatus(statusPort)
          return last && last.spool.punches === 0 ? last : undefined
        },
        'the spool to drain into the cloud',
        { describe: () => last && { spool: last.spool, forwarding: last.forwarding, alarms: last.alarms } },
      )
      drainMs = Date.now() - drainStartedAt
      expect(await agent.stop(), 'exit status of a SIGTERM stop').toBe(0)
    } finally {
      // The counts are printed even when the run fails on its way, so CI logs show how far it got.
      device.stopStreaming()
      rows = await storedPunches(tenantId)
      result = audit(
        device.punches.map((p) => ({ ...p, mustArrive: p.acked })),
        MQTT_DEVICE,
        rows,
      )
      const acked = device.punches.filter((p) => p.acked)
      printTable('hajri-agent MQTT durability', {
        seed: SEED,
        database: DATABASE,
        kills: kills.length,
        'kills while streaming': kills.filter((k) => k.mode === 'streaming').length,
        'kills just after start': kills.filter((k) => k.mode === 'reconnect').length,
        'kills while starting': kills.filter((k) => k.mode === 'startup').length,
        'kills in the outage': kills.filter((k) => k.cloud !== 'up').length,
        'kills mid chunk write (.tmp left)': kills.filter((k) => k.halfWritten > 0).length,
        'agent processes': agent.runs,
        published: device.punches.length,
        PUBACKed: acked.length,
        'PUBACKed after a reconnect': acked.filter((p) => p.ackConnection !== p.firstConnection).length,
        'published again by the device': device.resends,
        stored: rows.length,
        duplicates: result.duplicates.length,
        lost: result.lost.length,
        'stored, never published': result.strangers.length,
        'outage backlog (spool)': outage?.backlog ?? 'n/a',
        'cloud rows during outage': outage ? `${outage.storedBefore} -> ${outage.storedAfter}` : 'n/a',
        'black-holed connections': proxy.connections.blackholed,
        'agent error lines': agent.errors.length,
        'unexpected agent exits': agent.unexpectedExits.length,
        'dead letters': drained?.deadLetters.count ?? 'n/a',
        'quarantined chunks': drained?.spool.quarantinedChunks ?? 'n/a',
        'start, median ms': median(startupMs),
        'start to device connected, median ms': median(reconnectMs),
        'final drain ms': drainMs ?? 'n/a',
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
      if (agent.errors.length > 0) console.warn('agent error lines (first 10):', agent.errors.slice(0, 10))
      if (agent.unexpectedExits.length > 0) console.warn('unexpected agent exits:', agent.unexpectedExits)
    }

    const acked = device.punches.filter((p) => p.acked)
    expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
    expect(kills).toHaveLength(total)
    expect(outage?.lastError, 'the agent saw the outage').toBeTruthy()
    expect(proxy.connections.blackholed, 'the agent tried the black-holed cloud').toBeGreaterThan(0)
    expect(
      result.lost.slice(0, 20),
      `${result.lost.length} PUBACKed punches never reached the cloud`,
    ).toEqual([])
    expect(
      result.duplicates.slice(0, 20),
      `${result.duplicates.length} punches stored more than once`,
    ).toEqual([])
    expect(
      result.strangers.slice(0, 20),
      `${result.strangers.length} stored punches were never published`,
    ).toEqual([])
    expect(rows).toHaveLength(acked.length)
    expect(acked).toHaveLength(device.punches.length)
    expect(device.repeatedAcks).toBe(0)
    expect(drained?.deadLetters.count).toBe(0)
    expect(drained?.spool.quarantinedChunks).toBe(0)
    // Punches really flowed through every phase: more than one per kill.
    expect(device.punches.length).toBeGreaterThan(total)
  })

  describe.skipIf(socat.skipReason !== undefined)(
    `serial on a socat pty pair${socat.skipReason ? ` (skipped: ${socat.skipReason})` : ''}`,
    () => {
      it('every ATTLOG line written while the port is there reaches the cloud exactly once, across unplugs, SIGKILLs and an outage', {
        timeout: 120_000,
      }, async () => {
        const startedAt = Date.now()
        const dir = await tempDir()
        const codes = Array.from({ length: 10 }, (_, i) => String(101 + i))
        const { tenantId, clientId, clientSecret } = await setUpTenant(codes)
        const proxy = await startProxy()
        const statusPort = await freePort()
        let port = await startSocatPtyPair(dir)
        cleanups.push(() => port.stop())
        const configPath = join(dir, 'agent.yaml')
        await writeAgentConfig(configPath, {
          siteId: 'e2e-serial',
          cloudUrl: `http://127.0.0.1:${proxy.port}`,
          clientId,
          clientSecretEnv: 'HAJRI_E2E_CLIENT_SECRET',
          spoolDir: join(dir, 'spool'),
          chunkPunches: 5,
          concurrency: 2,
          timeoutSeconds: 3,
          statusPort,
          serial: { path: join(dir, 'dev'), deviceId: SERIAL_DEVICE },
        })
        const agent = new AgentProcess({
          configPath,
          env: { HAJRI_E2E_CLIENT_SECRET: clientSecret },
          logPath: join(dir, 'agent.log'),
        })
        cleanups.push(() => agent.dispose())

        const deviceStatus = async () =>
          (await agentStatus(statusPort))?.devices.find((d) => d.id === SERIAL_DEVICE)
        const portState = (...states: string[]) =>
          waitFor(
            async () => states.includes((await deviceStatus())?.state ?? ''),
            `the port to be ${states.join(' or ')}`,
          )

        // ATTLOG lines in the site's time zone, Asia/Kolkata (UTC+05:30, no DST).
        const firstMs = Math.floor(Date.now() / 60_000) * 60_000 - 24 * 3600_000
        const written: {
          employeeCode: string
          punchType: 'IN' | 'OUT'
          punchedAtMs: number
          mustArrive: boolean
        }[] = []
        let host: FileHandle | undefined
        cleanups.push(async () => host?.close().catch(() => {}))
        const writeLines = async (count: number) => {
          let text = ''
          for (let i = 0; i < count; i++) {
            const seq = written.length
            const punchedAtMs = firstMs + seq * 60_000
            const local = new Date(punchedAtMs + 330 * 60_000).toISOString().slice(0, 19).replace('T', ' ')
            const status = seq % 2
            written.push({
              employeeCode: codes[seq % codes.length] as string,
              punchType: status === 0 ? 'IN' : 'OUT',
              punchedAtMs,
              mustArrive: true,
            })
            text += `${codes[seq % codes.length]}\t${local}\t${status}\t1\t0\r\n`
          }
          // Several writes, so frames also arrive cut across reads.
          const third = Math.ceil(text.length / 3)
          for (let at = 0; at < text.length; at += third) await host?.write(text.slice(at, at + third))
        }
        const inCloud = (count: number) =>
          waitFor(
            async () => (await storedPunches(tenantId)).length >= count,
            `${count} punches in the cloud`,
          )
        const spooledThisRun = (count: number) =>
          waitFor(async () => ((await deviceStatus())?.punches ?? 0) >= count, `${count} punches spooled`)

        // 1. Port there, cloud up.
        await agent.start()
        await portState('connected')
        host = await open(join(dir, 'host'), 'r+')
        await writeLines(10)
        await inCloud(10)

        // 2. The adapter is pulled out; the agent is killed while it is gone and starts without it.
        await host.close()
        await port.stop()
        await portState('disconnected', 'waiting')
        await agent.kill()
        await agent.start()
        await portState('waiting')

        // 3. The adapter comes back; the cloud goes away; lines are spooled, then the agent is
        //    killed again with them only in its spool.
        port = await startSocatPtyPair(dir)
        await portState('connected')
        await proxy.cut('refuse')
        host = await open(join(dir, 'host'), 'r+')
        await writeLines(10)
        await spooledThisRun(10)
        await agent.kill()
        await agent.start()
        await portState('connected')

        // 4. Unplugged and back once more with the agent running; then the cloud returns.
        await host.close()
        await port.stop()
        await portState('disconnected', 'waiting')
        port = await startSocatPtyPair(dir)
        await portState('connected')
        host = await open(join(dir, 'host'), 'r+')
        await writeLines(10)
        await spooledThisRun(10)
        await proxy.restore()
        await inCloud(written.length)
        await host.close()
        const drained = await waitFor(async () => {
          const s = await agentStatus(statusPort)
          return s && s.spool.punches === 0 ? s : undefined
        }, 'the spool to drain')
        expect(await agent.stop()).toBe(0)

        const rows = await storedPunches(tenantId)
        const { lost, duplicates, strangers } = audit(written, SERIAL_DEVICE, rows)
        printTable('hajri-agent serial durability', {
          'lines written': written.length,
          stored: rows.length,
          duplicates: duplicates.length,
          lost: lost.length,
          'stored, never written': strangers.length,
          'agent processes': agent.runs,
          'agent error lines': agent.errors.length,
          'unexpected agent exits': agent.unexpectedExits.length,
          'dead letters': drained.deadLetters.count,
          seconds: Math.round((Date.now() - startedAt) / 1000),
        })
        expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
        expect(lost, 'lines that never reached the cloud').toEqual([])
        expect(duplicates, 'lines stored more than once').toEqual([])
        expect(strangers, 'stored punches that were never written').toEqual([])
        expect(rows).toHaveLength(written.length)
        expect(drained.deadLetters.count).toBe(0)
      })
    },
  )
})
