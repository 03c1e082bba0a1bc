/**
 * A durability test (docs/decisions/0024-ack-after-fsync.md) for terminals the agent reads over the
 * ZK protocol on port 4370 (docs/development/zk-protocol.md): hajri-agent runs as a real child
 * process (`node --import tsx agent/main.ts run --config ...`) in front of a real cloud (TestCloud,
 * listening on a port), and reads a terminal played by the emulator
 * (agent/simulator/zk-device/zk-device.ts) in this process, over TCP, with 40-byte records. The
 * terminal starts with a log of its own and keeps making punches, which the agent takes both as
 * real-time events (CMD_REG_EVENT) and by reading the whole log (its first read after every start,
 * and every `pollEvery`). The agent is killed with SIGKILL 24 times, at moments chosen so that the
 * kills land in every phase of its work: while it starts, while the terminal is paused and its log
 * is being transferred, while the records read are being stored and the cursor moved, between
 * reads while real-time punches arrive, and during a periodic read.
 *
 * The agent moves its cursor (`devices/zk.json` in the spool) only once the records it counts are
 * stored, a chunk leaves the spool only once the cloud has every punch in it, and the punch id
 * (externalId, docs/decisions/0025-punch-id.md) makes every record read or forwarded again
 * harmless. So: every record on the terminal reaches the cloud exactly once, nothing reaches it that
 * the terminal did not record, and the terminal's log is only ever read (no CLEAR_ATTLOG, no write
 * of any kind) and is not left paused once an agent has read it and stopped cleanly.
 *
 * The seed of the kill moments is printed with the counts; HAJRI_E2E_SEED=<n> replays its choices
 * (the timing around them is the machine's). HAJRI_E2E_KEEP=1 keeps the temporary directory (the
 * agent's log of every run, its spool); HAJRI_E2E_DATABASE=postgres uses PostgreSQL for the cloud.
 */
import { readdir, readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_STATUS_MAP } from '../../../agent/punch/normalize.js'
import { punchId } from '../../../agent/punch/punch-id.js'
import { ZK_CMD } from '../../../agent/simulator/zk-device/zk-commands.js'
import { ZkDevice } from '../../../agent/simulator/zk-device/zk-device.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { formatInZone, parseLocalTimestamp } from '../../../shared/time.js'
import { AgentProcess } from '../../support/agent-process.js'
import type { DatabaseKind } from '../../support/cloud-harness.js'
import { agentStatus, freePort, printTable, seededRandom, sleep, waitFor } from '../../support/e2e-kit.js'
import { median } from '../../support/median.js'
import { postgresAvailability } from '../../support/services.js'
import { writeZkAgentConfig } from '../../support/zk-agent-config.js'
import { DurabilityRig, type StoredPunch } from './durability-rig.js'

const DATABASE: DatabaseKind = process.env.HAJRI_E2E_DATABASE === 'postgres' ? 'postgres' : 'sqlite'
if (DATABASE === 'postgres') {
  const postgres = await postgresAvailability()
  if (postgres.skipReason) throw new Error(`HAJRI_E2E_DATABASE=postgres but ${postgres.skipReason}`)
}

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)

/**
 * Where each kill is aimed, how many of each (24 in all, "at least 20"), in an order the seed
 * shuffles:
 * - starting: anywhere in a start (loading the code, opening the spool and the cursor file,
 *   connecting, opening the session);
 * - reading: the terminal paused (CMD_DISABLEDEVICE) and its log on its way in chunks;
 * - storing: the log read and the terminal enabled again, its records being handed to the spool
 *   and the cursor written;
 * - idle: between reads, real-time punches being stored and forwarded;
 * - polling: a read that `pollEvery` started, not the first of a run (costs a poll interval).
 */
const KILLS = { starting: 4, reading: 8, storing: 4, idle: 7, polling: 1 } as const
type KillMode = keyof typeof KILLS
const TOTAL_KILLS = Object.values(KILLS).reduce<number>((a, b) => a + b, 0)

/** What the terminal was doing for the run killed, read from the requests it received. */
type Phase =
  | 'before the session'
  | 'opening the session'
  | 'mid-read'
  | 'storing the first read'
  | 'between reads'

const SITE_ZONE = 'Asia/Kolkata' // agent-process.ts writes it; the device entry names no zone of its own
const DEVICE_ID = 'gate-zk'
const CODES = Array.from({ length: 40 }, (_, i) => `E${String(i + 1).padStart(3, '0')}`)
/** The log the terminal holds before the agent first reads it, so that the first read is a real one. */
const INITIAL_RECORDS = 500
/**
 * Every answer of the terminal comes this late. Real terminals answer in milliseconds, not the
 * microseconds of an emulator in this process; at 15 ms a read (pause, sizes, data request, a
 * chunk per 1,636 records, release, enable) stays paused for 100 ms and more, long enough for a
 * kill aimed at it to land inside it on a busy machine. Far below the agent's 2 s timeout.
 */
const REPLY_DELAY_MS = 15
/** A kill aimed at a read comes this long, at most, after the terminal was paused. */
const READ_KILL_WINDOW_MS = 60

/** The only requests a reader sends: nothing that writes to the terminal (docs/development/zk-protocol.md). */
const READ_ONLY_COMMANDS = new Set<number>([
  ZK_CMD.CMD_CONNECT,
  ZK_CMD.CMD_AUTH,
  ZK_CMD.CMD_EXIT,
  ZK_CMD.CMD_OPTIONS_RRQ,
  ZK_CMD.CMD_GET_VERSION,
  ZK_CMD.CMD_GET_FREE_SIZES,
  ZK_CMD.CMD_GET_TIME,
  ZK_CMD.CMD_DISABLEDEVICE,
  ZK_CMD.CMD_ENABLEDEVICE,
  ZK_CMD.CMD_REG_EVENT,
  ZK_CMD.CMD_DATA_WRRQ,
  ZK_CMD.CMD_DATA_RDY,
  ZK_CMD.CMD_FREE_DATA,
])

/** A record as the test made it, to compare with the terminal's log at the end. */
interface Made {
  userId: string
  time: string
  state: number
}

/** Wall-clock arithmetic on the zone-free scale the terminal keeps its times on. */
const wallText = (naiveMs: number) => new Date(naiveMs).toISOString().slice(0, 19)
const naiveMsOf = (wall: string) => Date.parse(`${wall}Z`)

/**
 * A terminal in use: a punch every 20–50 ms, none while it is paused. Record k is employee k mod 40 at wall time first + k s,
 * its state (0–5, check-in to overtime-out) turning over per employee, so no two records share an
 * employee, a second and a direction, and no two share a punch id. The times stay in the past (first
 * is 20 hours back), inside the cloud's backfill window and never "in the future".
 */
class PunchStream {
  readonly made: Made[] = []
  /** Tries at the terminal while it was paused. */
  refusedWhilePaused = 0
  private timer: NodeJS.Timeout | undefined
  private running = false

  constructor(
    private readonly device: ZkDevice,
    private readonly firstNaiveMs: number,
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
        this.punch()
        this.schedule()
      },
      20 + Math.floor(this.random() * 31),
    )
  }

  private punch(): void {
    // A paused terminal takes no punch (docs/site-agent/zk-terminals.md, "Pauses"): the person tries
    // again a moment later. The emulator would take it, and its count and its log would disagree.
    if (this.device.disabled) {
      this.refusedWhilePaused++
      return
    }
    const k = this.made.length
    const made: Made = {
      userId: CODES[k % CODES.length] as string,
      time: wallText(this.firstNaiveMs + k * 1000),
      state: Math.floor(k / CODES.length) % 6,
    }
    this.device.punch(made)
    this.made.push(made)
  }
}

/** Fisher–Yates with the seeded source: the same seed, the same order of kill modes. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

describe(`hajri-agent durability with a ZK terminal read over port 4370: a child process killed with SIGKILL [${DATABASE}]`, () => {
  const rig = new DurabilityRig(DATABASE)
  const { cleanups } = rig

  it(`every record on the terminal reaches the cloud exactly once across ${TOTAL_KILLS} SIGKILLs, and its log is only read`, {
    // About 50 s on a 2-core machine: most of it the 25 starts of the agent (node and tsx loading
    // it) and two poll intervals (the periodic read killed, the last punches read at the end); the
    // margin is for a machine busy with other work, and for reads retried after a growing wait.
    timeout: 240_000,
  }, async () => {
    const startedAt = Date.now()
    const dir = await rig.tempDir('hajri-e2e-zk-')
    const { tenantId, clientId, clientSecret } = await rig.setUpTenant(CODES, 'hajri-agent ZK e2e')
    const cloudPort = (rig.cloud.app.server.address() as AddressInfo).port

    // The terminal's clock on the site's wall time, as an installer sets it, so the agent sees no skew.
    const nowWall = formatInZone(Date.now() * 1000, SITE_ZONE).slice(0, 19)
    const device = new ZkDevice({
      port: 0,
      serialNumber: 'CEXJ201260042',
      recordSize: 40,
      time: nowWall,
      faults: { replyDelayMs: REPLY_DELAY_MS },
    })
    await device.start()
    cleanups.push(() => device.stop())
    const firstNaiveMs = naiveMsOf(nowWall) - 20 * 3600_000
    // Years of use in short: a minute apart, before the first punch the stream makes.
    const initial: Made[] = Array.from({ length: INITIAL_RECORDS }, (_, i) => ({
      userId: CODES[i % CODES.length] as string,
      time: wallText(firstNaiveMs - (INITIAL_RECORDS - i) * 60_000),
      state: i % 2,
    }))
    device.fillLog(INITIAL_RECORDS, (i) => initial[i] as Made)

    const statusPort = await freePort()
    const configPath = join(dir, 'agent.yaml')
    const spoolDir = join(dir, 'spool')
    await writeZkAgentConfig(
      configPath,
      {
        siteId: 'e2e-zk',
        cloudUrl: `http://127.0.0.1:${cloudPort}`,
        clientId,
        clientSecretEnv: 'HAJRI_E2E_CLIENT_SECRET',
        spoolDir,
        // Small chunks and several requests at once, as in agent-durability.test.ts: many chunk
        // files written and deleted, so the kills land on every step of a chunk's life too.
        chunkPunches: 20,
        concurrency: 4,
        timeoutSeconds: 5,
        statusPort,
      },
      {
        id: DEVICE_ID,
        zk: {
          host: '127.0.0.1',
          port: device.port,
          transport: 'tcp',
          commKey: 0,
          // The shortest poll the configuration allows, and real-time events: punches come both ways.
          pollEvery: '10s',
          realtime: true,
          setTime: false,
          timeoutSeconds: 2,
        },
      },
    )
    const agent = new AgentProcess({
      configPath,
      env: { HAJRI_E2E_CLIENT_SECRET: clientSecret },
      logPath: join(dir, 'agent.log'),
    })
    cleanups.push(() => agent.dispose())

    const random = seededRandom(SEED)
    const stream = new PunchStream(device, firstNaiveMs, seededRandom(SEED + 1))
    const modes = shuffled(
      (Object.entries(KILLS) as [KillMode, number][]).flatMap(([mode, n]) => Array<KillMode>(n).fill(mode)),
      random,
    )

    /** Where the current run's requests start in `device.commands`, and when it was spawned. */
    let runFrom = 0
    let spawnedAt = Date.now()
    let running: Promise<void> = Promise.resolve()
    const startupMs: number[] = []
    const spawn = () => {
      runFrom = device.commands.length
      spawnedAt = Date.now()
      const at = spawnedAt
      running = agent.spawn().running
      running.then(
        () => startupMs.push(Date.now() - at),
        () => {},
      )
    }
    /** The first `command` the terminal received at or after `from`, waited for. */
    const received = (command: number, from: number, what: string, timeoutMs = 30_000) =>
      waitFor(
        () => {
          const commands = device.commands
          for (let i = from; i < commands.length; i++) if (commands[i] === command) return { at: i }
          return undefined
        },
        what,
        {
          timeoutMs,
          intervalMs: 1,
          describe: () => ({
            alive: agent.alive,
            thisRun: device.commands.slice(runFrom).slice(-30),
            disabled: device.disabled,
            sessions: device.sessionCount,
          }),
        },
      )
    /** What the run was doing when it died, from the requests the terminal had from it. */
    const phaseOf = (commands: readonly number[]): Phase => {
      const disabled = commands.lastIndexOf(ZK_CMD.CMD_DISABLEDEVICE)
      if (disabled > commands.lastIndexOf(ZK_CMD.CMD_ENABLEDEVICE)) return 'mid-read'
      if (commands.includes(ZK_CMD.CMD_REG_EVENT)) return 'between reads'
      if (commands.includes(ZK_CMD.CMD_ENABLEDEVICE)) return 'storing the first read'
      if (commands.includes(ZK_CMD.CMD_CONNECT)) return 'opening the session'
      return 'before the session'
    }

    const kills: {
      n: number
      mode: KillMode
      phase: Phase
      /** The terminal paused at the kill instant, and still paused once the process was gone. */
      disabledAtKill: boolean
      leftDisabled: boolean
      /** The terminal still held the dead process's session a second after it was gone. */
      sessionHeld: boolean
    }[] = []
    let rows: StoredPunch[] = []
    let result: ReturnType<typeof audit> | undefined
    let drained: AgentStatus | undefined
    let drainMs: number | undefined
    let exitCode: number | null | undefined
    let spoolDevices: string[] = []

    stream.start()
    spawn()
    try {
      for (const [i, mode] of modes.entries()) {
        const n = i + 1
        if (mode === 'starting') {
          const window = 1.2 * (median(startupMs) || 2000)
          await sleep(Math.max(0, Math.floor(random() * window) - (Date.now() - spawnedAt)))
        } else if (mode === 'reading') {
          await received(ZK_CMD.CMD_DISABLEDEVICE, runFrom, `a read to start (kill ${n})`)
          await sleep(Math.floor(random() * READ_KILL_WINDOW_MS))
        } else if (mode === 'storing') {
          const paused = await received(ZK_CMD.CMD_DISABLEDEVICE, runFrom, `a read to start (kill ${n})`)
          await received(ZK_CMD.CMD_ENABLEDEVICE, paused.at + 1, `the read to end (kill ${n})`)
          await sleep(Math.floor(random() * 40))
        } else if (mode === 'idle') {
          await running
          await received(ZK_CMD.CMD_REG_EVENT, runFrom, `real-time events to be asked for (kill ${n})`)
          await sleep(300 + Math.floor(random() * 2200))
        } else {
          await running
          const registered = await received(
            ZK_CMD.CMD_REG_EVENT,
            runFrom,
            `real-time events to be asked for (kill ${n})`,
          )
          // The next pause is a read `pollEvery` started: 10 s on, with a generous margin.
          await received(ZK_CMD.CMD_DISABLEDEVICE, registered.at + 1, `a periodic read (kill ${n})`, 60_000)
          await sleep(Math.floor(random() * READ_KILL_WINDOW_MS))
        }
        const disabledAtKill = device.disabled
        await agent.kill()
        // The emulator frees the session once it sees the connection closed, which a SIGKILL does
        // at once; were it slower, the next run would be refused and retry, which is allowed.
        const sessionHeld = await waitFor(() => device.sessionCount === 0, 'the session to be freed', {
          timeoutMs: 1000,
          intervalMs: 5,
        }).then(
          () => false,
          () => true,
        )
        kills.push({
          n,
          mode,
          phase: phaseOf(device.commands.slice(runFrom)),
          disabledAtKill,
          leftDisabled: device.disabled,
          sessionHeld,
        })
        // The next process: same configuration, spool and port, as a service manager restarts it.
        spawn()
      }

      // The last run: up, reading and taking real-time events for a moment, then the terminal
      // stops making punches and everything it holds must reach the cloud.
      await running
      await received(ZK_CMD.CMD_REG_EVENT, runFrom, 'real-time events to be asked for (last run)')
      await sleep(1000 + Math.floor(random() * 1000))
      stream.stop()
      const drainStartedAt = Date.now()
      const expected = expectedPunches(device)
      let last: AgentStatus | undefined
      drained = await waitFor(
        async () => {
          rows = await rig.storedPunches(tenantId)
          last = await agentStatus(statusPort)
          const stored = new Set(rows.map((r) => r.external_id))
          const pull = last?.devices.find((d) => d.id === DEVICE_ID)?.details?.pull
          return [...expected.keys()].every((id) => stored.has(id)) &&
            last?.spool.punches === 0 &&
            pull?.recordsRead === device.recordCount
            ? last
            : undefined
        },
        'every record on the terminal to be read and in the cloud',
        {
          // A punch made between the last run's read and its CMD_REG_EVENT waits for the next poll.
          timeoutMs: 90_000,
          intervalMs: 250,
          describe: () => ({
            expected: expected.size,
            stored: rows.length,
            spool: last?.spool,
            forwarding: last?.forwarding,
            pull: last?.devices.find((d) => d.id === DEVICE_ID)?.details?.pull,
            recordCount: device.recordCount,
          }),
        },
      )
      drainMs = Date.now() - drainStartedAt
      exitCode = await agent.stop()
      spoolDevices = await readdir(join(spoolDir, 'devices')).catch(() => [])
    } finally {
      // The counts are printed even when the run fails on its way, so CI logs show how far it got.
      stream.stop()
      rows = await rig.storedPunches(tenantId)
      result = audit(device, rows)
      // Reads the agent gave up and tried again later (a log that would not decode, a full spool):
      // not a loss, but each one pauses the terminal once more.
      const failedReads = (await readFile(join(dir, 'agent.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line.includes('"reading the ZK terminal failed')).length
      const count = (pick: (k: (typeof kills)[number]) => boolean) => kills.filter(pick).length
      const sent = (command: number) => device.commands.filter((c) => c === command).length
      printTable('hajri-agent durability (ZK terminal read over port 4370)', {
        seed: SEED,
        database: DATABASE,
        kills: kills.length,
        ...Object.fromEntries(
          (Object.keys(KILLS) as KillMode[]).map((m) => [`kills aimed: ${m}`, count((k) => k.mode === m)]),
        ),
        'landed: before the session': count((k) => k.phase === 'before the session'),
        'landed: opening the session': count((k) => k.phase === 'opening the session'),
        'landed: mid-read (terminal paused)': count((k) => k.phase === 'mid-read'),
        'landed: storing the first read': count((k) => k.phase === 'storing the first read'),
        'landed: between reads': count((k) => k.phase === 'between reads'),
        'terminal paused at the kill instant': count((k) => k.disabledAtKill),
        'terminal left paused by the kill': count((k) => k.leftDisabled),
        'session still held 1 s after a kill': count((k) => k.sessionHeld),
        'agent processes': agent.runs,
        'sessions opened': device.stats.sessions,
        'sessions refused (one at a time)': device.stats.sessionsRefused,
        'reads (CMD_DATA_WRRQ)': sent(ZK_CMD.CMD_DATA_WRRQ),
        'chunks sent': device.stats.chunks,
        'real-time events sent': device.stats.eventsSent,
        'real-time events acknowledged': device.stats.eventAcks,
        'records at the start': INITIAL_RECORDS,
        'punches made meanwhile': stream.made.length,
        'tries while paused (not taken)': stream.refusedWhilePaused,
        'records on the terminal': device.recordCount,
        stored: rows.length,
        lost: result.lost.length,
        duplicates: result.duplicates.length,
        'stored, not on the terminal': result.strangers.length,
        'records sharing an id (test fault)': result.collisions.length,
        'failed reads (agent warnings)': failedReads,
        'agent error lines': agent.errors.length,
        'unexpected agent exits': agent.unexpectedExits.length,
        'dead letters': drained?.deadLetters.count ?? 'n/a',
        'quarantined chunks': drained?.spool.quarantinedChunks ?? 'n/a',
        'start, median ms': median(startupMs),
        'final drain ms': drainMs ?? 'n/a',
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
      if (agent.errors.length > 0) console.warn('agent error lines (first 10):', agent.errors.slice(0, 10))
      if (agent.unexpectedExits.length > 0) console.warn('unexpected agent exits:', agent.unexpectedExits)
    }

    expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
    expect(kills).toHaveLength(TOTAL_KILLS)
    expect(exitCode, 'exit status of a SIGTERM stop').toBe(0)

    // Every record on the terminal in the cloud once, and nothing else.
    expect(result.collisions, 'records that share a punch id: the test made them wrong').toEqual([])
    expect(result.lost.slice(0, 20), `${result.lost.length} records never reached the cloud`).toEqual([])
    expect(
      result.duplicates.slice(0, 20),
      `${result.duplicates.length} records stored more than once`,
    ).toEqual([])
    expect(
      result.strangers.slice(0, 20),
      `${result.strangers.length} stored punches the terminal did not record`,
    ).toEqual([])
    expect(rows).toHaveLength(device.recordCount)
    expect(drained?.deadLetters.count).toBe(0)
    expect(drained?.spool.quarantinedChunks).toBe(0)

    // The terminal's log only read: exactly the records it made, in order, and no request that writes.
    const onDevice = device.records.map((r): Made => ({ userId: r.userId, time: r.time, state: r.state }))
    expect(onDevice).toEqual([...initial, ...stream.made])
    expect(device.commands, 'CMD_CLEAR_ATTLOG').not.toContain(ZK_CMD.CMD_CLEAR_ATTLOG)
    expect(
      [...new Set(device.commands.filter((c) => !READ_ONLY_COMMANDS.has(c)))],
      'requests other than reads',
    ).toEqual([])
    // A kill mid-read leaves it paused (no published description says what firmware does when the
    // session drops, and the emulator keeps it paused); the next run's first read enables it again
    // (docs/site-agent/zk-terminals.md, "A read"), and a clean stop ends the session: so at the end
    // it is enabled and free.
    expect(device.disabled, 'the terminal left paused').toBe(false)
    expect(device.sessionCount).toBe(0)
    // The log was only appended to: a notice (cleared, shifted, clock back) would be the agent
    // misreading its own cursor after a kill, and an unreadable cursor file a torn write.
    expect(drained?.devices.find((d) => d.id === DEVICE_ID)?.details?.pull?.notices).toEqual([])
    expect(spoolDevices.filter((f) => f.includes('unreadable'))).toEqual([])

    // The phases really happened: kills with the terminal paused mid-read and between reads, punches
    // taken as real-time events, and far more records than kills.
    expect(kills.filter((k) => k.phase === 'mid-read').length, 'kills mid-read').toBeGreaterThan(0)
    expect(kills.filter((k) => k.phase === 'between reads').length, 'kills between reads').toBeGreaterThan(0)
    expect(device.stats.eventAcks, 'real-time events acknowledged').toBeGreaterThan(0)
    expect(stream.made.length).toBeGreaterThan(TOTAL_KILLS * 10)
  })
})

/**
 * The punches the terminal's records must make, by punch id, as the intake makes them
 * (agent/punch/normalize.ts): the PIN is the employee code (no PIN rule configured), the record's
 * wall time read in the site's zone (the device entry names none), the direction from its state
 * with the default status map.
 */
function expectedPunches(device: ZkDevice) {
  const made = new Map<string, { key: string; count: number }>()
  for (const record of device.records) {
    const micros = parseLocalTimestamp(record.time, SITE_ZONE)
    if (micros === undefined) throw new Error(`the terminal wrote a time that is not one: ${record.time}`)
    const type = DEFAULT_STATUS_MAP[String(record.state)]
    if (type === undefined) throw new Error(`the test made a state the default map lacks: ${record.state}`)
    const id = punchId(DEVICE_ID, record.userId, micros, type)
    const entry = made.get(id) ?? { key: `${DEVICE_ID}|${record.userId}|${micros}|${type}`, count: 0 }
    entry.count++
    made.set(id, entry)
  }
  return made
}

/** Every record on the terminal against what the cloud stored. */
function audit(device: ZkDevice, rows: readonly StoredPunch[]) {
  const made = expectedPunches(device)
  const key = (row: StoredPunch) =>
    `${row.device_id}|${row.employee_code}|${row.punched_at}|${row.punch_type}`
  const byExternalId = new Map<string, number>()
  const byKey = new Map<string, number>()
  for (const row of rows) {
    byExternalId.set(row.external_id ?? '', (byExternalId.get(row.external_id ?? '') ?? 0) + 1)
    byKey.set(key(row), (byKey.get(key(row)) ?? 0) + 1)
  }
  const lost = [...made]
    .filter(([id, m]) => (byExternalId.get(id) ?? 0) === 0 || (byKey.get(m.key) ?? 0) === 0)
    .map(([id, m]) => `${m.key} (${id})`)
  const duplicates = [
    ...[...byExternalId].filter(([, n]) => n > 1).map(([id, n]) => `externalId ${id} x${n}`),
    ...[...byKey].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`),
  ]
  // Stored, but no record made it, or stored as something other than the record its id names.
  const strangers = rows
    .filter((row) => made.get(row.external_id ?? '')?.key !== key(row))
    .map((row) => JSON.stringify(row))
  // Two records of the test's making with one identity: a fault of the test, not of the agent.
  const collisions = [...made].filter(([, m]) => m.count > 1).map(([id, m]) => `${m.key} (${id}) x${m.count}`)
  return { lost, duplicates, strangers, collisions }
}
