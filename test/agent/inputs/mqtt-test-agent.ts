/**
 * What the MQTT input tests stand on: a real PunchIntake over a real Spool and DeadLetters in a temp
 * directory (so "durable" means fsynced files), sinks that hold or refuse accepts on demand, and a
 * few small helpers. Not a test file itself.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import type { DeviceConfig, Transport } from '../../../agent/config/schema.js'
import { type AgentEvents, EventBus } from '../../../agent/events.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import type { AcceptSummary, PunchSink } from '../../../agent/intake/punch-sink.js'
import type { DeadLetter, SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { formatInZone, nowMicros } from '../../../shared/time.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'

export const silentLog = pino({ level: 'silent' })

export interface TestAgent {
  dir: string
  spool: Spool
  deadLetters: DeadLetters
  events: EventBus
  intake: PunchIntake
  /** Every deviceState event, in order. */
  deviceStates: AgentEvents['deviceState'][]
  punches(): Promise<SpooledPunch[]>
  deadLettered(): Promise<DeadLetter[]>
  close(): Promise<void>
}

export async function startTestAgent(
  devices: DeviceConfig[],
  options: { maxBytes?: number } = {},
): Promise<TestAgent> {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-mqtt-'))
  const events = new EventBus(silentLog)
  const spool = new Spool({
    dir: join(dir, 'spool'),
    maxBytes: options.maxBytes ?? 1024 * 1024 * 1024,
    chunkPunches: 500,
    log: silentLog,
    events,
  })
  const deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log: silentLog })
  await spool.start()
  await deadLetters.open()
  const intake = new PunchIntake({
    config: {
      site: { id: 'test-site', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
      devices,
    },
    spool,
    deadLetters,
    events,
    log: silentLog,
  })
  const deviceStates: AgentEvents['deviceState'][] = []
  events.on('deviceState', (event) => {
    deviceStates.push(event)
  })
  return {
    dir,
    spool,
    deadLetters,
    events,
    intake,
    deviceStates,
    async punches() {
      const all: SpooledPunch[] = []
      for (const ref of spool.pending()) all.push(...(await spool.read(ref)))
      return all
    },
    deadLettered: () => allDeadLetters(deadLetters),
    async close() {
      await spool.stop()
      await deadLetters.drain()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

export function mqttDevice(id: string, topic: string, format: 'json' | 'zk-attlog' = 'json'): DeviceConfig {
  return { id, mqtt: { topic, format } }
}

let minute = 0

/**
 * A valid MQTT JSON punch (docs/decisions/0030-mqtt-json-payload.md), minutes in the past (each call a
 * different minute, so a new id).
 */
export function punchPayload(employeeCode = 'E001', punchType: 'IN' | 'OUT' = 'IN'): string {
  minute += 1
  const at = nowMicros() - minute * 60_000_000
  return JSON.stringify({ employeeCode, punchType, punchedAt: formatInZone(at, 'Asia/Kolkata') })
}

/** A sink whose accepts wait until released, each one separately. */
export class HeldSink implements PunchSink {
  readonly held: { deviceId: string; frame: Buffer; release: () => void; fail: (err: unknown) => void }[] = []

  constructor(private readonly inner: PunchSink) {}

  accept(deviceId: string, transport: Transport, frame: Buffer): Promise<AcceptSummary> {
    return new Promise<AcceptSummary>((resolve, reject) => {
      this.held.push({
        deviceId,
        frame,
        release: () => this.inner.accept(deviceId, transport, frame).then(resolve, reject),
        fail: reject,
      })
    })
  }

  rejectFrame(deviceId: string, transport: Transport, raw: Buffer, detail: string): Promise<void> {
    return this.inner.rejectFrame(deviceId, transport, raw, detail)
  }
}

/** A sink that refuses (rejects with what `refusal` returns) while it returns an error. */
export class RefusingSink implements PunchSink {
  readonly calls: { deviceId: string; frame: string; refused: boolean }[] = []

  constructor(
    private readonly inner: PunchSink,
    public refusal: (frame: string) => Error | undefined,
  ) {}

  async accept(deviceId: string, transport: Transport, frame: Buffer): Promise<AcceptSummary> {
    const error = this.refusal(frame.toString('utf8'))
    this.calls.push({ deviceId, frame: frame.toString('utf8'), refused: error !== undefined })
    if (error) throw error
    return this.inner.accept(deviceId, transport, frame)
  }

  rejectFrame(deviceId: string, transport: Transport, raw: Buffer, detail: string): Promise<void> {
    return this.inner.rejectFrame(deviceId, transport, raw, detail)
  }
}

/** A unique name for this run, so concurrent runs on a shared broker do not meet. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
}
