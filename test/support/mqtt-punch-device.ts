/**
 * A network punch device, played by mqtt.js: QoS 1, a persistent session (fixed clientId,
 * `clean: false`), reconnecting every 50 ms while the agent is down. It streams punches, each with its
 * own (employeeCode, punchedAt), so every punch id the agent derives (docs/decisions/0025-punch-id.md) is
 * distinct, and records which publishes were PUBACKed: the publish callback without an error is the PUBACK.
 *
 * What mqtt.js does on its own (mqtt/build/lib/client.js, checked for 5.16): a QoS 1 PUBLISH stays in
 * its outgoing store until PUBACKed; after a reconnect `_onConnect` sends the store again (one at a
 * time, each after the previous PUBACK) before it emits 'connect'. Publishes made during that replay
 * wait in a queue which is failed with "Connection closed" if the connection drops again: those were
 * never sent, and mqtt.js forgets them. A real device keeps a punch in its log until it is
 * acknowledged, so this one publishes such a punch again (`resends`), same payload, same punch id.
 */
import mqtt, { type MqttClient } from 'mqtt'

export interface DevicePunch {
  seq: number
  employeeCode: string
  punchType: 'IN' | 'OUT'
  /** ms since the epoch, whole seconds. */
  punchedAtMs: number
  payload: string
  /** PUBACKed (the callback came without an error). */
  acked: boolean
  /** Times handed to mqtt.js (more than 1: mqtt.js failed it and the device sent it again). */
  publishes: number
  /** The connection count when it was first published, and when its PUBACK came. */
  firstConnection: number
  ackConnection: number | undefined
}

export interface MqttPunchDeviceOptions {
  url: string
  clientId: string
  username: string
  password: string
  topic: string
  employeeCodes: readonly string[]
  /** The first punch's time; each next one is a second later. */
  firstPunchMs: number
  /** Punches published every tick while below maxOutstanding. */
  perTick: number
  tickMs: number
  /** A device's memory: no new punch is made while this many are unacknowledged. */
  maxOutstanding: number
}

export class MqttPunchDevice {
  readonly punches: DevicePunch[] = []
  private readonly client: MqttClient
  private timer: NodeJS.Timeout | undefined
  private connectWaiters: (() => void)[] = []
  /** CONNACKs received (mqtt.js 'connect' comes after its store has been sent again). */
  connections = 0
  /** Punches published again by the device after mqtt.js failed them. */
  resends = 0
  /** Callbacks for a punch already PUBACKed: mqtt.js misbehaving; reported, must stay 0. */
  repeatedAcks = 0
  private outstandingCount = 0
  private ending = false

  constructor(private readonly options: MqttPunchDeviceOptions) {
    this.client = mqtt.connect(options.url, {
      clientId: options.clientId,
      clean: false,
      protocolVersion: 4,
      username: options.username,
      password: options.password,
      reconnectPeriod: 50,
      connectTimeout: 5_000,
      keepalive: 30,
    })
    this.client.on('connect', () => {
      this.connections++
      for (const wake of this.connectWaiters.splice(0)) wake()
    })
    // ECONNREFUSED while the agent is down, ECONNRESET when it is killed: mqtt.js reconnects.
    this.client.on('error', () => {})
  }

  get connected(): boolean {
    return this.client.connected
  }

  /** Published and not (yet) PUBACKed. */
  get outstanding(): number {
    return this.outstandingCount
  }

  /** Resolves once the device has connected more than `after` times (its store replayed). */
  async connectedAfter(after: number): Promise<void> {
    if (this.connections > after) return
    await new Promise<void>((resolve) => {
      this.connectWaiters.push(resolve)
    })
    if (this.connections <= after) await this.connectedAfter(after)
  }

  startStreaming(): void {
    this.timer ??= setInterval(() => this.tick(), this.options.tickMs)
  }

  stopStreaming(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  async end(): Promise<void> {
    this.ending = true
    this.stopStreaming()
    await this.client.endAsync(true)
  }

  private tick(): void {
    for (let i = 0; i < this.options.perTick && this.outstandingCount < this.options.maxOutstanding; i++) {
      const seq = this.punches.length
      const employeeCode = this.options.employeeCodes[seq % this.options.employeeCodes.length] as string
      const punchType = seq % 2 === 0 ? 'IN' : 'OUT'
      const punchedAtMs = this.options.firstPunchMs + seq * 1000
      const punch: DevicePunch = {
        seq,
        employeeCode,
        punchType,
        punchedAtMs,
        payload: JSON.stringify({
          employeeCode,
          punchType,
          punchedAt: new Date(punchedAtMs).toISOString().replace('.000Z', 'Z'),
        }),
        acked: false,
        publishes: 0,
        firstConnection: this.connections,
        ackConnection: undefined,
      }
      this.punches.push(punch)
      this.outstandingCount++
      this.publish(punch)
    }
  }

  private publish(punch: DevicePunch): void {
    if (this.ending) return
    punch.publishes++
    this.client.publish(this.options.topic, punch.payload, { qos: 1 }, (err) => {
      if (punch.acked) {
        this.repeatedAcks++
        return
      }
      if (err) {
        if (this.ending) return
        // Never sent (see above): the device still has it and sends it again. Not from inside this
        // callback: mqtt.js calls it while emptying the very queue a publish now would join.
        this.resends++
        setTimeout(() => this.publish(punch), 10)
        return
      }
      punch.acked = true
      punch.ackConnection = this.connections
      this.outstandingCount--
    })
  }
}
