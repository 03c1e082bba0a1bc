import type { Logger } from 'pino'
import type { AcceptSummary, PunchSink } from '../intake/punch-sink.js'
import { SpoolFullError } from '../spool/spool.js'

/** Topics remembered for "logged once"; a client inventing topics cannot grow memory past this. */
const MAX_REMEMBERED = 1000

class OnceSet {
  private readonly seen = new Set<string>()

  /** True the first time a key is offered (while fewer than MAX_REMEMBERED are remembered). */
  first(key: string): boolean {
    if (this.seen.has(key) || this.seen.size >= MAX_REMEMBERED) return false
    this.seen.add(key)
    return true
  }
}

/**
 * What the two MQTT inputs say about punches they could not or would not store, said once per
 * condition rather than once per message: a device whose punches are refused resends them, and a
 * line per resend would bury the one line that matters (an alarm: docs/decisions/0027-nothing-dropped.md).
 */
export class MqttInputLog {
  private refusing: SpoolFullError | undefined
  private readonly unknownTopics = new OnceSet()
  private readonly qos0Devices = new OnceSet()
  private readonly retainedDevices = new OnceSet()

  constructor(private readonly log: Logger) {}

  /** Whether punches are being refused right now (the spool is full). */
  get spoolRefusing(): boolean {
    return this.refusing !== undefined
  }

  /** `accept` failed: the punch was not acknowledged and its source keeps it. */
  notStored(deviceId: string, err: unknown): void {
    if (err instanceof SpoolFullError) {
      if (!this.refusing) {
        this.log.error(
          { err, deviceId, reason: err.reason },
          'ALARM: spool full, refusing MQTT punches (no PUBACK; devices and the broker keep them until there is room)',
        )
      }
      this.refusing = err
      return
    }
    this.log.error({ err, deviceId }, 'punch not stored; not acknowledged, it will be sent again')
  }

  /** `accept` succeeded: ends a refusal episode. */
  stored(): void {
    if (!this.refusing) return
    this.refusing = undefined
    this.log.info('spool has room again: accepting MQTT punches')
  }

  unknownTopic(topic: string, detail: Record<string, unknown>): void {
    if (this.unknownTopics.first(topic)) {
      this.log.warn(
        { ...detail, topic: topic.slice(0, 256) },
        'message on a topic no device is configured for: acknowledged and not stored',
      )
    }
  }

  qos0(deviceId: string): void {
    if (this.qos0Devices.first(deviceId)) {
      this.log.warn(
        { deviceId },
        'device publishes punches with QoS 0: stored, but it gets no acknowledgement and a punch lost on the way is not resent; configure QoS 1',
      )
    }
  }

  retained(deviceId: string, detail: string): void {
    if (this.retainedDevices.first(deviceId)) this.log.warn({ deviceId }, detail)
  }
}

/** `sink.accept` as a promise even if a sink throws instead of rejecting: inside a broker callback a throw would escape into aedes or mqtt.js. */
export function acceptSafely(sink: PunchSink, deviceId: string, frame: Buffer): Promise<AcceptSummary> {
  return new Promise<AcceptSummary>((resolve) => resolve(sink.accept(deviceId, 'mqtt', frame)))
}
