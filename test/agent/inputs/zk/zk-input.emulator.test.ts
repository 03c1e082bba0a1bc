/**
 * The agent's reader of ZK terminals (ZkInput) against the terminal emulator, over real TCP and UDP
 * sockets: every record is handed on once, through reconnects, a dropped read, a cleared log and a
 * clock set back, and the device's log is left as it was.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeviceConfig, ZkDeviceConfig } from '../../../../agent/config/schema.js'
import { EventBus } from '../../../../agent/events.js'
import { DeviceCommandError, type PullDetails } from '../../../../agent/inputs/device-report.js'
import { ZkClient } from '../../../../agent/inputs/zk/zk-client.js'
import { ZkInput } from '../../../../agent/inputs/zk/zk-input.js'
import type { AcceptSummary, PunchSink } from '../../../../agent/intake/punch-sink.js'
import { ZK_CMD } from '../../../../agent/simulator/zk-device/zk-commands.js'
import { ZkDevice } from '../../../../agent/simulator/zk-device/zk-device.js'
import type { ZkDeviceOptions } from '../../../../agent/simulator/zk-device/zk-device-options.js'
import { waitFor } from '../../../support/e2e-kit.js'

const log = pino({ level: 'silent' })

/** What the input handed on: ATTLOG lines, as the intake reads them. */
class RecordingSink implements PunchSink {
  readonly lines: string[] = []
  readonly rejected: { raw: string; detail: string }[] = []

  async accept(_deviceId: string, transport: string, frame: Buffer): Promise<AcceptSummary> {
    expect(transport).toBe('zk')
    const lines = frame.toString('utf8').split('\n')
    this.lines.push(...lines)
    return { records: lines.length, spooled: lines.length, resent: 0, deadLettered: 0 }
  }

  async rejectFrame(_deviceId: string, _transport: string, raw: Buffer, detail: string): Promise<void> {
    this.rejected.push({ raw: raw.toString('utf8'), detail })
  }

  /** PIN, time and state of each line: what makes a punch. */
  punches(): string[] {
    return this.lines.map((line) => line.split('\t').slice(0, 3).join('\t'))
  }

  duplicates(): string[] {
    const seen = new Set<string>()
    const twice: string[] = []
    for (const punch of this.punches()) {
      if (seen.has(punch)) twice.push(punch)
      seen.add(punch)
    }
    return twice
  }
}

interface Rig {
  device: ZkDevice
  sink: RecordingSink
  input: ZkInput
  dir: string
  pull(): PullDetails
}

const rigs: Rig[] = []
const clients: ZkClient[] = []

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
  const devices = new Set<ZkDevice>()
  const dirs = new Set<string>()
  for (const rig of rigs.splice(0)) {
    await rig.input.stop()
    devices.add(rig.device)
    dirs.add(rig.dir)
  }
  for (const device of devices) await device.stop()
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

async function startDevice(options: ZkDeviceOptions = {}): Promise<ZkDevice> {
  const device = new ZkDevice({ serialNumber: 'CEXJ201260001', ...options })
  await device.start()
  return device
}

async function startInput(
  device: ZkDevice,
  zk: Partial<ZkDeviceConfig> = {},
  reuse?: { dir: string },
): Promise<Rig> {
  const dir = reuse?.dir ?? (await mkdtemp(join(tmpdir(), 'hajri-zk-input-')))
  const config: DeviceConfig & { zk: ZkDeviceConfig } = {
    id: 'gate',
    timezone: 'UTC',
    zk: {
      host: '127.0.0.1',
      port: device.port,
      transport: 'tcp',
      commKey: 0,
      pollEvery: '1s',
      realtime: false,
      setTime: false,
      timeoutSeconds: 2,
      ...zk,
    },
  }
  const sink = new RecordingSink()
  const input = new ZkInput({
    devices: [config],
    siteTimeZone: 'Asia/Kolkata',
    spoolDir: dir,
    sink,
    events: new EventBus(log),
    log,
    reconnectBackoff: { initialMs: 50, maxMs: 400 },
  })
  await input.start()
  const rig: Rig = {
    device,
    sink,
    input,
    dir,
    pull: () => {
      const pull = input.report().devices.gate?.pull
      if (!pull) throw new Error('no pull details')
      return pull
    },
  }
  rigs.push(rig)
  return rig
}

/** PIN, time and state of the device's records, as the agent should hand them on. */
function onDevice(device: ZkDevice): string[] {
  return device.records.map((r) => `${r.userId}\t${r.time.replace('T', ' ')}\t${r.state}`)
}

describe.each(['tcp', 'udp'] as const)('ZkInput over %s', (transport) => {
  it.each([40, 16, 8] as const)(
    'hands on every record of a %i-byte log once, then only the new ones',
    async (recordSize) => {
      const device = await startDevice({ recordSize })
      // 16- and 8-byte devices know numeric PINs only; 8-byte records hold the user number.
      device.users.add({ userId: '4822257', uid: 7 })
      device.fillLog(50, (i) => ({
        userId: i % 3 === 0 ? '4822257' : String(100 + (i % 7)),
        time: `2026-11-20T${String(6 + (i % 12)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
        state: i % 2,
        verify: 1,
      }))
      const { sink, pull } = await startInput(device, { transport })
      await waitFor(() => sink.lines.length >= 50, 'the log read', { describe: () => pull() })
      expect(sink.punches()).toEqual(onDevice(device))
      expect(sink.lines[0]).toMatch(/^4822257\t2026-11-20 06:00:00\t0\t1\t0$/)
      for (let i = 0; i < 3; i++)
        device.punch({ userId: '4822257', time: `2026-11-21T09:0${i}:00`, state: 1 })
      await waitFor(() => sink.lines.length >= 53, 'the new records')
      await waitFor(() => pull().recordsRead === 53, 'the cursor to move')
      expect(sink.punches()).toEqual(onDevice(device))
      expect(sink.rejected).toEqual([])
      expect(device.recordCount).toBe(53)
      expect(device.disabled).toBe(false)
    },
  )

  it('reads with the comm key, and is refused without it', async () => {
    const device = await startDevice({ commKey: 314159 })
    device.fillLog(5)
    const wrong = await startInput(device, { transport, commKey: 27 })
    await waitFor(() => wrong.pull().lastError?.code === 'zk_auth_refused', 'the refusal', {
      describe: () => wrong.pull(),
    })
    expect(wrong.sink.lines).toEqual([])
    await wrong.input.stop()
    const right = await startInput(device, { transport, commKey: 314159 })
    await waitFor(() => right.sink.lines.length === 5, 'the log read')
    expect(right.sink.punches()).toEqual(onDevice(device))
  })

  it('hands on each punch as it happens, acknowledged, and the next read does not hand it on again', async () => {
    const device = await startDevice()
    device.fillLog(3)
    // An hour between polls: what arrives now arrives by real-time event.
    const rig = await startInput(device, { transport, realtime: true, pollEvery: '1h' })
    await waitFor(() => rig.sink.lines.length === 3 && rig.pull().lastReadAt, 'the first read')
    await waitFor(() => device.commands.includes(ZK_CMD.CMD_REG_EVENT), 'CMD_REG_EVENT')
    device.punch({ userId: '77', state: 0 })
    device.punch({ userId: '78', state: 1 })
    await waitFor(() => rig.sink.lines.length === 5, 'the real-time punches')
    expect(device.stats.eventAcks).toBe(2)
    expect(rig.sink.punches()).toEqual(onDevice(device))
    await rig.input.stop()

    // Polls in between: a log grown by exactly the punches reported is not read again (the
    // device is not paused per punch); one grown by a record no event reported is, and only that
    // record is handed on.
    const again = await startDevice()
    const fast = await startInput(again, { transport, realtime: true, pollEvery: '1s' })
    await waitFor(() => again.commands.includes(ZK_CMD.CMD_REG_EVENT), 'CMD_REG_EVENT')
    const reads = () => fast.input.report().devices.gate?.uploads
    const afterAPoll = async () => {
      const before = fast.pull().clockCheckedAt
      await waitFor(() => fast.pull().clockCheckedAt !== before, 'a poll')
    }
    expect(reads()).toBe(1)
    for (let i = 0; i < 3; i++) {
      await afterAPoll()
      again.punch({ userId: String(200 + i), state: i % 2 })
      await waitFor(() => fast.sink.lines.length === i + 1, `punch ${i}`)
    }
    await afterAPoll()
    expect(reads()).toBe(1)
    again.fillLog(1, () => ({ userId: '299', time: '2026-11-26T06:00:00' }))
    await waitFor(() => fast.sink.lines.length === 4, 'the record no event reported')
    // The read is counted once it has ended (its cursor saved), a moment after its records are
    // handed on: on a loaded machine the count can lag the sink.
    await waitFor(() => reads() === 2, 'the read counted')
    expect(reads()).toBe(2)
    expect(fast.sink.punches()).toEqual(onDevice(again))
    expect(fast.sink.duplicates()).toEqual([])
  })

  it('reads a log of 100,000 records in chunks, then only what is added', async () => {
    const device = await startDevice({ recordCapacity: 200_000 })
    device.fillLog(100_000, (i) => ({
      userId: `E${i % 977}`,
      time: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07`,
      state: i % 6,
    }))
    const rig = await startInput(device, { transport, timeoutSeconds: 10 })
    await waitFor(() => rig.sink.lines.length >= 100_000, '100,000 records', { timeoutMs: 120_000 })
    expect(device.stats.chunks).toBeGreaterThan(1)
    expect(rig.sink.duplicates()).toEqual([])
    expect(rig.sink.punches()).toEqual(onDevice(device))
    device.punch({ userId: 'E1', time: '2026-12-01T08:00:00' })
    await waitFor(() => rig.sink.lines.length === 100_001, 'the one new record')
    await waitFor(() => rig.pull().recordsRead === 100_001, 'the cursor')
    expect(rig.sink.lines.at(-1)).toMatch(/^E1\t2026-12-01 08:00:00\t0\t/)
  }, 180_000)

  it('completes a read the connection dropped in the middle of, losing and repeating nothing', async () => {
    const device = await startDevice({ faults: { dropAfterChunks: 2 } })
    device.fillLog(20_000)
    const rig = await startInput(device, { transport, timeoutSeconds: 1 })
    await waitFor(() => device.stats.drops >= 1, 'a dropped read')
    expect(rig.sink.lines).toEqual([])
    await waitFor(() => rig.pull().lastError !== null, 'the lost session in status')
    device.faults.dropAfterChunks = null
    await waitFor(() => rig.sink.lines.length >= 20_000, 'the next read', { timeoutMs: 60_000 })
    await waitFor(() => rig.pull().recordsRead === 20_000, 'the cursor')
    expect(rig.sink.punches()).toEqual(onDevice(device))
    expect(rig.sink.duplicates()).toEqual([])
    expect(device.disabled).toBe(false)
    expect(device.recordCount).toBe(20_000)
  }, 90_000)
})

describe('ZkInput', () => {
  it('notices a log cleared on the device, and reads what is on it since, once', async () => {
    const device = await startDevice()
    device.fillLog(30)
    const rig = await startInput(device)
    await waitFor(() => rig.pull().recordsRead === 30, 'the first read')
    device.clearLog()
    for (let i = 0; i < 5; i++) device.punch({ userId: String(300 + i), state: 0 })
    await waitFor(() => rig.sink.lines.length === 35, 'the records made since')
    await waitFor(() => rig.pull().recordsRead === 5, 'the cursor from the start')
    expect(rig.sink.duplicates()).toEqual([])
    expect(rig.sink.punches().slice(30)).toEqual(onDevice(device))
    expect(rig.pull().notices.map((n) => n.kind)).toEqual(['log_cleared'])
  })

  it("keeps the punches made after the device's clock went back, and says so", async () => {
    const device = await startDevice({ time: '2026-11-26T10:00:00' })
    device.fillLog(10)
    const rig = await startInput(device)
    await waitFor(() => rig.pull().recordsRead === 10, 'the first read')
    device.clock.set('2026-11-26T07:30:00')
    for (let i = 0; i < 3; i++) device.punch({ userId: String(400 + i), state: 1 })
    await waitFor(() => rig.sink.lines.length === 13, 'the punches made on the earlier clock')
    expect(rig.sink.punches()).toEqual(onDevice(device))
    const notice = await waitFor(() => rig.pull().notices.find((n) => n.kind === 'clock_back'), 'the notice')
    expect(notice.message).toContain('2026-11-26T07:30:00')
  })

  it("reads the device's clock, and sets it from the agent's on request", async () => {
    // The device runs two hours behind (in UTC, the device's configured zone).
    const behind = new Date(Date.now() - 2 * 3600_000).toISOString().slice(0, 19)
    const device = await startDevice({ time: behind })
    const rig = await startInput(device)
    const skew = await waitFor(() => rig.pull().clockSkewSeconds, 'the clock read')
    expect(Math.abs(skew + 7200)).toBeLessThan(120)
    const result = await rig.input.setTime('gate')
    expect(Math.abs(result.skewSeconds)).toBeLessThan(120)
    const wall = device.clock.now()
    const deviceMs = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second)
    expect(Math.abs(deviceMs - Date.now())).toBeLessThan(120_000)
    expect(device.commands).toContain(ZK_CMD.CMD_SET_TIME)
  })

  it('clears the log only when told that every punch is in the cloud, and then reads from its start', async () => {
    const device = await startDevice()
    device.fillLog(12)
    const rig = await startInput(device)
    await waitFor(() => rig.pull().recordsRead === 12, 'the first read')
    await expect(rig.input.clearLog('gate', async () => '3 punches wait in the spool')).rejects.toThrow(
      /3 punches wait in the spool/,
    )
    expect(device.recordCount).toBe(12)
    expect(device.commands).not.toContain(ZK_CMD.CMD_CLEAR_ATTLOG)
    expect(await rig.input.clearLog('gate', async () => undefined)).toEqual({ cleared: 12 })
    expect(device.recordCount).toBe(0)
    expect(device.disabled).toBe(false)
    device.punch({ userId: '500', state: 0 })
    await waitFor(() => rig.sink.lines.length === 13, 'the punch made after the clear')
    expect(rig.sink.duplicates()).toEqual([])
    expect(rig.pull().notices.map((n) => n.kind)).toEqual(['log_cleared_by_command'])
  })

  it('waits while another program holds the one session the device allows, then reads', async () => {
    const device = await startDevice()
    device.fillLog(4)
    const other = await ZkClient.connect({ host: '127.0.0.1', port: device.port, transport: 'tcp' })
    clients.push(other)
    const rig = await startInput(device)
    await waitFor(() => rig.pull().lastError?.code === 'zk_session_refused', 'the refusal', {
      describe: () => rig.pull(),
    })
    expect(rig.sink.lines).toEqual([])
    await expect(rig.input.setTime('gate')).rejects.toBeInstanceOf(DeviceCommandError)
    await other.close()
    await waitFor(() => rig.sink.lines.length === 4, 'the read once the session is free')
    expect(rig.sink.punches()).toEqual(onDevice(device))
  })

  it('resumes from its cursor after a restart, handing on nothing twice', async () => {
    const device = await startDevice()
    device.fillLog(40)
    const first = await startInput(device)
    await waitFor(() => first.pull().recordsRead === 40, 'the first read')
    await first.input.stop()
    device.fillLog(2)
    const second = await startInput(device, {}, { dir: first.dir })
    await waitFor(() => second.pull().recordsRead === 42, 'the read after the restart')
    expect(second.sink.punches()).toEqual(onDevice(device).slice(40))
  })
})
