/**
 * SerialInput through a real pseudo-terminal pair from socat, with the real
 * serialport bindings, into a real PunchIntake and Spool. Killing socat makes the port vanish like
 * an unplugged USB adapter; restarting it with the same link names brings it back
 * (docs/decisions/0031-real-components-in-tests.md: skipped with a reason when socat is absent, failed under
 * HAJRI_TEST_REQUIRE_ALL=1).
 */
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { AgentEvents } from '../../../agent/events.js'
import { SerialInput } from '../../../agent/inputs/serial-input.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../shared/time.js'
import { socatAvailability } from '../../support/services.js'
import { startSocatPtyPair } from '../../support/socat-pty-pair.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'
import { recordEvents, serialSettings, silentLog, until } from './serial-test-kit.js'

const socat = await socatAvailability()

const NOW = parseTimestamp('2026-11-21T12:00:00+05:30') as number
const line = (pin: string, time: string, status: number) => `${pin}\t2026-11-21 ${time}\t${status}\t1\t0\r\n`

describe.skipIf(socat.skipReason !== undefined)(
  `SerialInput on a socat pty pair with the real bindings${socat.skipReason ? ` (skipped: ${socat.skipReason})` : ''}`,
  () => {
    const cleanups: (() => Promise<void>)[] = []
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    })

    it('spools punches, waits while the port is gone, and reads again when it is back', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hajri-serial-'))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      let device = await startSocatPtyPair(dir)
      cleanups.push(() => device.stop())

      const log = silentLog()
      const { events, states } = recordEvents(log)
      const spooled: AgentEvents['punchesSpooled'][] = []
      events.on('punchesSpooled', (e) => {
        spooled.push(e)
      })
      const spool = new Spool({ dir: join(dir, 'spool'), maxBytes: 1 << 30, chunkPunches: 100, log, events })
      const deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
      await spool.start()
      await deadLetters.open()
      cleanups.push(async () => {
        await spool.stop()
        await deadLetters.drain()
      })
      const serial = serialSettings(join(dir, 'dev'), { baudRate: 115_200 })
      const intake = new PunchIntake({
        config: {
          site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
          devices: [{ id: 'main-door', serial }],
        },
        spool,
        deadLetters,
        events,
        log,
        now: () => NOW,
      })
      // No SerialPort option: the real serialport bindings.
      const input = new SerialInput({
        deviceId: 'main-door',
        serial,
        sink: intake,
        events,
        log,
        reopenBackoff: { initialMs: 20, maxMs: 200 },
      })
      cleanups.push(() => input.stop())
      const count = (state: string) => states.filter((s) => s.state === state).length
      const spooledCount = () => spooled.reduce((sum, e) => sum + e.count, 0)

      await input.start()
      await until(() => count('connected') === 1, 'the pty to open')
      let host: FileHandle = await open(join(dir, 'host'), 'r+')
      await host.write(line('101', '09:00:00', 0) + line('102', '09:01:00', 1))
      await host.write(line('103', '09:02:00', 0))
      await until(() => spooledCount() === 3, 'three punches in the spool')

      await host.close()
      await device.stop()
      await until(() => count('disconnected') === 1, 'the port to disappear')
      await until(() => count('waiting') >= 3, 'reopen attempts while the port is gone')
      expect(states.find((s) => s.state === 'waiting')?.detail).toMatch(/is not there/)

      device = await startSocatPtyPair(dir)
      await until(() => count('connected') === 2, 'the port to come back')
      host = await open(join(dir, 'host'), 'r+')
      await host.write(line('104', '10:00:00', 1) + line('105', '10:01:00', 0))
      await until(() => spooledCount() === 5, 'five punches in the spool')
      await host.close()
      await input.stop()

      const punches: SpooledPunch[] = []
      for (const ref of spool.pending()) punches.push(...(await spool.read(ref)))
      expect(punches.map((p) => [p.deviceId, p.employeeCode, p.punchType, p.punchedAt]).sort()).toEqual([
        ['main-door', '101', 'IN', '2026-11-21T09:00:00+05:30'],
        ['main-door', '102', 'OUT', '2026-11-21T09:01:00+05:30'],
        ['main-door', '103', 'IN', '2026-11-21T09:02:00+05:30'],
        ['main-door', '104', 'OUT', '2026-11-21T10:00:00+05:30'],
        ['main-door', '105', 'IN', '2026-11-21T10:01:00+05:30'],
      ])
      expect(await allDeadLetters(deadLetters)).toEqual([])
      expect(states.map((s) => s.state).filter((s, i, all) => s !== all[i - 1])).toEqual([
        'connected',
        'disconnected',
        'waiting',
        'connected',
      ])
      expect(input.stats()).toMatchObject({ frames: 5, malformedFrames: 0, failedFrames: 0, opens: 2 })
    })
  },
)
