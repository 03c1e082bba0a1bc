/**
 * A durability test (docs/decisions/0024-ack-after-fsync.md) for push terminals (ADMS, the iclock protocol):
 * hajri-agent runs as a real child process (`node --import tsx agent/main.ts run --config ...`) in
 * front of a real cloud (TestCloud, listening on a port, reached through a TCP proxy that can cut it
 * off). Two terminals played by the firmware model (agent/simulator/adms-device.ts, written from
 * the protocol, not from the listener) punch continuously and upload as firmware does: each batch
 * posted until the agent answers `OK: n`, and posted again after ErrorDelay on any failure (a
 * refused connection while the agent is dead, a reset when it is killed mid-request). The agent is
 * killed with SIGKILL at random moments, 22 times with the cloud up and 4 more during a cloud
 * outage; one terminal reboots mid-run, the other forgets its stamps and reboots (its whole log sent
 * again while the kills go on). The listener answers `OK: n` only once the records are durable in
 * the spool, a chunk is deleted only once the cloud has every punch in it, and the punch id
 * (externalId) makes every resend harmless. So: every record in every terminal's log reaches the
 * cloud exactly once, and nothing reaches it that no terminal made.
 *
 * The seed of the kill moments is printed with the counts; HAJRI_E2E_SEED=<n> replays its choices
 * (the timing around them is the machine's). HAJRI_E2E_KEEP=1 keeps the temporary directory (the
 * agent's log of every run, its spool); HAJRI_E2E_DATABASE=postgres uses PostgreSQL for the cloud.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { punchId } from '../../../agent/punch/punch-id.js'
import { AdmsDevice } from '../../../agent/simulator/adms-device.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { parseLocalTimestamp } from '../../../shared/time.js'
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
import { postgresAvailability } from '../../support/services.js'
import { DurabilityRig, type StoredPunch } from './durability-rig.js'

const DATABASE: DatabaseKind = process.env.HAJRI_E2E_DATABASE === 'postgres' ? 'postgres' : 'sqlite'
if (DATABASE === 'postgres') {
  const postgres = await postgresAvailability()
  if (postgres.skipReason) throw new Error(`HAJRI_E2E_DATABASE=postgres but ${postgres.skipReason}`)
}

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)
/** "SIGKILLed at random points, at least 20 times": 22 with the cloud up... */
const KILLS_CLOUD_UP = 22
/** ...and 4 more while the cloud cannot be reached: 26 in all. */
const KILLS_CLOUD_DOWN = 4
/** Before this kill, the first terminal reboots (its batch in flight and its cursor lost). */
const REBOOT_AT = 4
/**
 * Before this kill, the second terminal forgets its stamps and reboots: its whole log comes again,
 * and this kill lands halfway through that.
 */
const STAMP_RESET_AT = 10

/** The site's zone (agent-process.ts writes it): terminals take it from the handshake's TimeZone. */
const SITE_ZONE = 'Asia/Kolkata'
/** Each terminal its own device and employees, so no two terminals' records can meet in one id. */
const TERMINALS = [
  { deviceId: 'gate-1', serialNumber: 'CJDE193560303', codes: codes(1, 20) },
  { deviceId: 'gate-2', serialNumber: 'CJDE193560417', codes: codes(21, 20) },
] as const

function codes(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `E${String(first + i).padStart(3, '0')}`)
}

type PunchType = 'IN' | 'OUT'

/**
 * A terminal in use: a punch every 15–45 ms, and now and then a queue at the sensor (a burst of
 * 4–16 at once), so the realtime uploads carry one record or several. Record k is employee
 * k mod 20 at host time first + k s, IN and OUT in turn per employee: each employee's records are
 * 20 s apart, far more than the second by which a terminal's clock may move at a handshake (its
 * Date header has whole seconds), so no two records share a wall-clock second and an id.
 */
class PunchStream {
  made = 0
  private timer: NodeJS.Timeout | undefined
  private running = false

  constructor(
    private readonly device: AdmsDevice,
    private readonly codes: readonly string[],
    private readonly firstMs: number,
    private readonly random: () => number,
  ) {}

  start(): void {
    this.running = true
    this.schedule()
  }

  stop(): void {
    this.running = false
    clearTimeout(this.timer)
  }

  private schedule(): void {
    if (!this.running) return
    this.timer = setTimeout(
      () => {
        const count = this.random() < 0.03 ? 4 + Math.floor(this.random() * 13) : 1
        for (let i = 0; i < count; i++) this.punch()
        this.schedule()
      },
      15 + Math.floor(this.random() * 31),
    )
  }

  private punch(): void {
    const k = this.made++
    const code = this.codes[k % this.codes.length] as string
    const status = Math.floor(k / this.codes.length) % 2
    // Acknowledged or not is read from the terminal's log at the end; a stop rejects the rest.
    this.device.punch({ pin: code, status, at: this.firstMs + k * 1000 }).catch(() => {})
  }
}

describe(`hajri-agent durability with push terminals (ADMS): a child process killed with SIGKILL [${DATABASE}]`, () => {
  const rig = new DurabilityRig(DATABASE)
  const { cleanups } = rig

  it(`every record a terminal made reaches the cloud exactly once across ${KILLS_CLOUD_UP} SIGKILLs, a cloud outage with ${KILLS_CLOUD_DOWN} more, a reboot and a stamp reset`, {
    // 1 to 1.5 minutes on a 2-core machine, most of it the 27 starts of the agent (node and tsx
    // loading it); the margin is for a machine busy with other work, where starts take twice as long.
    timeout: 240_000,
  }, async () => {
    const startedAt = Date.now()
    const dir = await rig.tempDir('hajri-e2e-adms-')
    const { tenantId, clientId, clientSecret } = await rig.setUpTenant(
      TERMINALS.flatMap((t) => t.codes),
      'hajri-agent ADMS e2e',
    )
    const proxy = await rig.startProxy()
    const admsPort = await freePort()
    const statusPort = await freePort()
    const configPath = join(dir, 'agent.yaml')
    const spoolDir = join(dir, 'spool')
    const [first, second] = TERMINALS
    await writeAgentConfig(configPath, {
      siteId: 'e2e-adms',
      cloudUrl: `http://127.0.0.1:${proxy.port}`,
      clientId,
      clientSecretEnv: 'HAJRI_E2E_CLIENT_SECRET',
      spoolDir,
      // Small chunks and several requests at once, as in agent-durability.test.ts: many chunk files written
      // and deleted, so the kills land on every step of a chunk's life.
      chunkPunches: 20,
      concurrency: 4,
      // A black-holed cloud is noticed in 3 s rather than the default 15.
      timeoutSeconds: 3,
      statusPort,
      // Delay and ErrorDelay of 1 s, the least the schema allows, handed to the terminals in the
      // handshake; the terminals keep to them at firmware speed (timeScale 1 below). So after a
      // kill a terminal posts its batch again a second later, exactly as real firmware would
      // against an agent configured so, and the test is quick without scaling the protocol.
      adms: {
        port: admsPort,
        deviceId: first.deviceId,
        serialNumber: first.serialNumber,
        moreTerminals: [{ deviceId: second.deviceId, serialNumber: second.serialNumber }],
        pollSeconds: 1,
        errorDelaySeconds: 1,
      },
    })
    const agent = new AgentProcess({
      configPath,
      env: { HAJRI_E2E_CLIENT_SECRET: clientSecret },
      logPath: join(dir, 'agent.log'),
    })
    cleanups.push(() => agent.dispose())
    await agent.start()

    const notices: string[] = []
    const devices = TERMINALS.map((t) => {
      const device = new AdmsDevice({
        url: `http://127.0.0.1:${admsPort}`,
        serialNumber: t.serialNumber,
        timeScale: 1,
        // A batch is up to 40 records: the backlog a kill leaves goes up in several.
        batchSize: 40,
        log: (message) => notices.push(`${t.serialNumber}: ${message}`),
      })
      cleanups.push(() => device.stop())
      return device
    })
    await Promise.all(devices.map((d) => withTimeout(d.start(), 30_000, `${d.serialNumber} to handshake`)))
    // Whole seconds in the recent past: inside the cloud's backfill window, never in the future.
    const firstMs = Math.floor(Date.now() / 1000) * 1000 - 20 * 3600_000
    const streams = devices.map(
      (d, i) => new PunchStream(d, TERMINALS[i]?.codes ?? [], firstMs, seededRandom(SEED + 1 + i)),
    )
    for (const stream of streams) stream.start()

    const deviceStatus = (status: AgentStatus | undefined, deviceId: string) =>
      status?.devices.find((d) => d.id === deviceId)

    const random = seededRandom(SEED)
    type KillMode = 'streaming' | 'reconnect' | 'startup' | 'resending'
    /**
     * Where a kill lands: mostly 50–400 ms after every terminal has had an upload stored by this
     * process (spool writes, `OK: n` replies, forwarding, chunk deletions); some within 1.2 s of
     * "running", while the terminals come back one ErrorDelay after their failed posts with what
     * piled up meanwhile; some anywhere in a start (loading the code, opening the spool, clearing
     * what the previous kill left half-written, the listeners opening), spread over a bit more
     * than the starts measured so far take.
     */
    const chooseMode = (): KillMode => {
      const r = random()
      return r < 0.7 ? 'streaming' : r < 0.9 ? 'reconnect' : 'startup'
    }
    const kills: {
      n: number
      mode: KillMode
      cloud: string
      halfWritten: number
      beforeRunning: boolean
      /** Landed while the terminal that forgot its stamps was sending records the cloud has. */
      inReupload: boolean
    }[] = []
    /** The terminal that forgets its stamps: its cursor then, and the handshakes it had before. */
    let reupload: { device: AdmsDevice; top: number; middle: number; handshakes: number } | undefined
    const reuploading = () =>
      reupload !== undefined &&
      reupload.device.stats.handshakes > reupload.handshakes &&
      reupload.device.cursor < reupload.top
    const total = KILLS_CLOUD_UP + KILLS_CLOUD_DOWN
    const outageFirst = KILLS_CLOUD_UP / 2 + 1
    const outageLast = outageFirst + KILLS_CLOUD_DOWN - 1
    let cloudState: 'up' | 'blackhole' | 'refused' = 'up'
    let outage: { backlog: number; lastError: string; storedBefore: number; storedAfter: number } | undefined
    let storedAtOutage = 0
    const reboots: Promise<void>[] = []
    let mode: KillMode = 'streaming'
    let spawnedAt = Date.now()
    let running = true
    const startupMs: number[] = []
    /** Spawn to every terminal's first upload stored by the new process. */
    const backMs: number[] = []
    let drainMs: number | undefined
    let drained: AgentStatus | undefined
    let rows: StoredPunch[] = []
    let result: ReturnType<typeof audit> | undefined

    try {
      for (let n = 1; n <= total; n++) {
        if (n === outageFirst) {
          storedAtOutage = (await rig.storedPunches(tenantId)).length
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
        // A terminal restarts: the batch in flight and its cursor are lost; the next handshake
        // hands it the agent's ATTLOGStamp, which must never be above what the spool holds.
        if (n === REBOOT_AT) reboots.push(handled((devices[0] as AdmsDevice).reboot()))
        // One forgets its stamps and restarts: its whole log comes again while the kills go on.
        if (n === STAMP_RESET_AT) {
          const device = devices[1] as AdmsDevice
          const bottom = device.log[0]?.stamp ?? 0
          reupload = {
            device,
            top: device.cursor,
            middle: bottom + Math.floor((device.cursor - bottom) / 2),
            handshakes: device.stats.handshakes,
          }
          device.forgetStamps()
          reboots.push(handled(device.reboot()))
        }

        if (mode === 'resending') {
          // Halfway through the log sent again: the records behind the cursor are resends, those
          // ahead of it are still to come, and the process storing them dies now.
          const r = reupload as NonNullable<typeof reupload>
          await waitFor(
            () => r.device.stats.handshakes > r.handshakes && r.device.cursor >= r.middle,
            `the terminal that forgot its stamps to send half its log again (kill ${n})`,
            {
              timeoutMs: 30_000,
              intervalMs: 5,
              describe: () => ({
                cursor: r.device.cursor,
                middle: r.middle,
                top: r.top,
                handshakes: r.device.stats.handshakes,
              }),
            },
          )
        } else if (mode === 'startup') {
          const window = 1.2 * (median(startupMs) || 2000)
          await sleep(Math.max(0, Math.floor(random() * window) - (Date.now() - spawnedAt)))
        } else if (mode === 'reconnect') {
          await sleep(Math.floor(random() * 1200))
        } else {
          const afterMs = 50 + Math.floor(random() * 350)
          let last: AgentStatus | undefined
          await waitFor(
            async () => {
              last = await agentStatus(statusPort)
              return TERMINALS.every((t) => (deviceStatus(last, t.deviceId)?.punches ?? 0) > 0)
            },
            `every terminal to have an upload stored by the new process (kill ${n})`,
            {
              timeoutMs: 30_000,
              intervalMs: 100,
              describe: () => ({
                devices: last?.devices.map((d) => ({ id: d.id, state: d.state, punches: d.punches })),
                failures: devices.map((d) => d.stats.lastFailure),
              }),
            },
          )
          backMs.push(Date.now() - spawnedAt)
          await sleep(afterMs)
        }
        await agent.kill()
        // A chunk file being written when the kill came (its .tmp, never renamed into place).
        const halfWritten = (await readdir(spoolDir).catch(() => [])).filter((f) => f.endsWith('.tmp')).length
        kills.push({
          n,
          mode,
          cloud: cloudState,
          halfWritten,
          beforeRunning: !running,
          inReupload: reuploading(),
        })

        // The next process: same configuration, spool and ports, as a service manager restarts it.
        mode =
          n + 1 === STAMP_RESET_AT
            ? 'resending'
            : n === total || n === outageLast
              ? 'streaming'
              : chooseMode()
        spawnedAt = Date.now()
        running = mode !== 'startup'
        if (mode === 'startup') {
          agent.spawn().running.then(
            () => {
              running = true
            },
            () => {},
          )
        } else {
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
            storedAfter: (await rig.storedPunches(tenantId)).length,
          }
          await proxy.restore()
          cloudState = 'up'
        }
      }

      // Drain: the terminals stop making records and are acknowledged for all they hold; the
      // agent forwards everything and is stopped cleanly.
      for (const stream of streams) stream.stop()
      const drainStartedAt = Date.now()
      await withTimeout(Promise.all(reboots), 60_000, 'the rebooted terminals to handshake')
      await waitFor(
        () => devices.every((d) => d.log.every((r) => r.acknowledged)),
        'every record of every terminal to be acknowledged',
        {
          describe: () =>
            devices.map((d) => ({
              serialNumber: d.serialNumber,
              pending: d.log.filter((r) => !r.acknowledged).length,
              lastFailure: d.stats.lastFailure,
            })),
        },
      )
      await withTimeout(Promise.all(devices.map((d) => d.flush())), 10_000, 'the terminals to flush')
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
      for (const stream of streams) stream.stop()
      rows = await rig.storedPunches(tenantId)
      result = audit(devices, rows)
      const records = devices.flatMap((d) => d.log)
      const sum = (pick: (d: AdmsDevice) => number) => devices.reduce((a, d) => a + pick(d), 0)
      printTable('hajri-agent ADMS durability (push terminals)', {
        seed: SEED,
        database: DATABASE,
        terminals: devices.length,
        kills: kills.length,
        'kills while streaming': kills.filter((k) => k.mode === 'streaming').length,
        'kills just after start': kills.filter((k) => k.mode === 'reconnect').length,
        'kills while starting': kills.filter((k) => k.mode === 'startup').length,
        'kills before "running"': kills.filter((k) => k.beforeRunning).length,
        'kills in the outage': kills.filter((k) => k.cloud !== 'up').length,
        'kills during a stamp-reset resend': kills.filter((k) => k.inReupload).length,
        'kills mid chunk write (.tmp left)': kills.filter((k) => k.halfWritten > 0).length,
        'agent processes': agent.runs,
        'terminal reboots (one with a stamp reset)': reboots.length,
        'terminal handshakes': sum((d) => d.stats.handshakes),
        'records made': records.length,
        'acknowledged by OK: n': records.filter((r) => r.acknowledgedBy === 'reply').length,
        'acknowledged by a handshake stamp': records.filter((r) => r.acknowledgedBy === 'stamp').length,
        'not acknowledged': records.filter((r) => !r.acknowledged).length,
        'batches posted': sum((d) => d.stats.batchesPosted),
        'batches resent': sum((d) => d.stats.batchesResent),
        'terminal request failures': sum((d) => d.stats.failures),
        stored: rows.length,
        duplicates: result.duplicates.length,
        lost: result.lost.length,
        'stored, no terminal made': result.strangers.length,
        'records sharing an id (test fault)': result.collisions.length,
        'outage backlog (spool)': outage?.backlog ?? 'n/a',
        'cloud rows during outage': outage ? `${outage.storedBefore} -> ${outage.storedAfter}` : 'n/a',
        'black-holed connections': proxy.connections.blackholed,
        'agent error lines': agent.errors.length,
        'unexpected agent exits': agent.unexpectedExits.length,
        'dead letters': drained?.deadLetters.count ?? 'n/a',
        'quarantined chunks': drained?.spool.quarantinedChunks ?? 'n/a',
        'start, median ms': median(startupMs),
        'start to terminals back, median ms': median(backMs),
        'final drain ms': drainMs ?? 'n/a',
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
      if (agent.errors.length > 0) console.warn('agent error lines (first 10):', agent.errors.slice(0, 10))
      if (agent.unexpectedExits.length > 0) console.warn('unexpected agent exits:', agent.unexpectedExits)
    }

    expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
    expect(kills).toHaveLength(total)
    expect(outage?.lastError, 'the agent saw the outage').toBeTruthy()
    expect(proxy.connections.blackholed, 'the agent tried the black-holed cloud').toBeGreaterThan(0)
    expect(result.collisions, 'records that share a punch id: the test made them wrong').toEqual([])
    expect(result.lost.slice(0, 20), `${result.lost.length} records never reached the cloud`).toEqual([])
    expect(
      result.duplicates.slice(0, 20),
      `${result.duplicates.length} records stored more than once`,
    ).toEqual([])
    expect(
      result.strangers.slice(0, 20),
      `${result.strangers.length} stored punches no terminal made`,
    ).toEqual([])
    const records = devices.flatMap((d) => d.log)
    expect(records.every((r) => r.acknowledged)).toBe(true)
    expect(rows).toHaveLength(records.length)
    expect(drained?.deadLetters.count).toBe(0)
    expect(drained?.spool.quarantinedChunks).toBe(0)
    // Records really flowed through every phase, and the reboots and the stamp reset happened.
    expect(records.length).toBeGreaterThan(total * 10)
    expect(devices[0]?.stats.handshakes).toBeGreaterThanOrEqual(2)
    expect(devices[1]?.stats.handshakes).toBeGreaterThanOrEqual(2)
    expect(devices.reduce((a, d) => a + d.stats.batchesResent, 0)).toBeGreaterThan(0)
    expect(
      kills.filter((k) => k.inReupload).length,
      'kills while a terminal sent again what the agent had',
    ).toBeGreaterThan(0)
  })
})

/**
 * Every record in every terminal's log against what the cloud stored. A record's instant comes from
 * the record itself, its wall time read in the site's zone (the terminal's clock was set from the
 * agent's Date header, so host time would not predict it), and its direction from its status with
 * the default map (0 check-in → IN, 1 check-out → OUT).
 */
function audit(
  devices: readonly AdmsDevice[],
  rows: {
    external_id: string | null
    employee_code: string
    punched_at: number
    punch_type: string
    device_id: string | null
  }[],
) {
  const key = (deviceId: string, code: string, micros: number, type: string) =>
    `${deviceId}|${code}|${micros}|${type}`
  const made = new Map<string, { id: string; count: number }>()
  for (const [i, device] of devices.entries()) {
    const deviceId = TERMINALS[i]?.deviceId as string
    for (const record of device.log) {
      const micros = parseLocalTimestamp(record.time, SITE_ZONE)
      if (micros === undefined) throw new Error(`a terminal wrote a time that is not one: ${record.time}`)
      const type: PunchType = record.status === 1 ? 'OUT' : 'IN'
      const k = key(deviceId, record.pin, micros, type)
      const entry = made.get(k) ?? { id: punchId(deviceId, record.pin, micros, type), count: 0 }
      entry.count++
      made.set(k, entry)
    }
  }
  const byKey = new Map<string, number>()
  const byExternalId = new Map<string, number>()
  for (const row of rows) {
    const k = key(row.device_id ?? '', row.employee_code, row.punched_at, row.punch_type)
    byKey.set(k, (byKey.get(k) ?? 0) + 1)
    byExternalId.set(row.external_id ?? '', (byExternalId.get(row.external_id ?? '') ?? 0) + 1)
  }
  const lost: string[] = []
  for (const [k, { id }] of made) {
    if ((byKey.get(k) ?? 0) === 0 || (byExternalId.get(id) ?? 0) === 0) lost.push(`${k} (${id})`)
  }
  const duplicates = [...byKey].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`)
  duplicates.push(...[...byExternalId].filter(([, n]) => n > 1).map(([id, n]) => `externalId ${id} x${n}`))
  // Stored, but no terminal made it, or stored under another id than the record's.
  const strangers = rows
    .filter((row) => {
      const m = made.get(key(row.device_id ?? '', row.employee_code, row.punched_at, row.punch_type))
      return !m || row.external_id !== m.id
    })
    .map((row) => JSON.stringify(row))
  // Two records of the test's making with one identity: a fault of the test, not of the agent.
  const collisions = [...made].filter(([, m]) => m.count > 1).map(([k, m]) => `${k} x${m.count}`)
  return { lost, duplicates, strangers, collisions }
}

/** The same promise, its rejection (the terminal stopped first) no longer unhandled meanwhile. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}
