import { connectAsync, type MqttClient } from 'mqtt'

/** A payload per publish: every punch distinct, as devices send them. */
export type PayloadSource = () => string

export interface MqttPhase {
  /** PUBACKs received between the phase's start and its end. */
  acked: number
  seconds: number
  /** acked / seconds. */
  perSecond: number
  /** Share of one core this (load generating) process used meanwhile: near 1, it may be the limit. */
  generatorCpu: number
}

// Long enough for the last window of publishes to be acknowledged by a busy agent (a group commit
// behind a slow fsync), short enough that a lost connection shows up as a problem, not a hang.
const SETTLE_TIMEOUT_MS = 30_000

interface Publisher {
  client: MqttClient
  inflight: number
}

/**
 * QoS 1 publishers (mqtt.js, MQTT 3.1.1) on `clients` connections to one broker, each keeping
 * `window` publishes waiting for their PUBACK: a new publish goes out as each PUBACK comes back, so
 * the broker is never waiting for the load and the rate is the broker's. mqtt.js sends as fast as
 * publish() is called, and never reconnects here (reconnectPeriod 0): a dropped connection, which
 * is how a broker refuses a PUBLISH, is counted as a problem rather than hidden by a resend.
 */
export class MqttPublishers {
  /** Every PUBACK since connecting: what the broker has taken responsibility for. */
  totalAcked = 0
  errors = 0
  firstError: string | undefined
  /** Connections that closed before close() was called. */
  lostConnections = 0
  private running = false
  private closing = false
  private settled: (() => void) | undefined

  private constructor(
    private readonly publishers: Publisher[],
    private readonly topic: string,
    private readonly window: number,
    private readonly nextPayload: PayloadSource,
  ) {
    for (const publisher of publishers) {
      publisher.client.on('close', () => {
        if (!this.closing) this.lostConnections++
      })
      publisher.client.on('error', (err) => this.fail(err))
    }
  }

  static async connect(options: {
    url: string
    topic: string
    clients: number
    window: number
    nextPayload: PayloadSource
  }): Promise<MqttPublishers> {
    const tag = Math.random().toString(36).slice(2, 8)
    const clients = await Promise.all(
      Array.from({ length: options.clients }, (_, i) =>
        connectAsync(options.url, {
          clientId: `bench-${tag}-${i}`,
          protocolVersion: 4,
          clean: true,
          reconnectPeriod: 0,
          connectTimeout: 10_000,
        }),
      ),
    )
    return new MqttPublishers(
      clients.map((client) => ({ client, inflight: 0 })),
      options.topic,
      options.window,
      options.nextPayload,
    )
  }

  private fail(err: unknown): void {
    this.errors++
    this.firstError ??= err instanceof Error ? err.message : String(err)
  }

  private get inflight(): number {
    return this.publishers.reduce((sum, p) => sum + p.inflight, 0)
  }

  private pump(publisher: Publisher): void {
    while (this.running && publisher.inflight < this.window && publisher.client.connected) {
      publisher.inflight++
      publisher.client.publish(this.topic, this.nextPayload(), { qos: 1 }, (err) => {
        publisher.inflight--
        if (err) this.fail(err)
        else this.totalAcked++
        if (this.running) this.pump(publisher)
        else if (this.inflight === 0) this.settled?.()
      })
    }
  }

  /**
   * Publishes for `seconds`, counting the PUBACKs that arrive meanwhile; then stops publishing and
   * waits for those still in flight, so the next phase (or the other broker) starts from rest.
   */
  async run(seconds: number): Promise<MqttPhase> {
    const ackedBefore = this.totalAcked
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    this.running = true
    for (const publisher of this.publishers) this.pump(publisher)
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    const acked = this.totalAcked - ackedBefore
    const elapsed = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    this.running = false
    await this.settle()
    return {
      acked,
      seconds: elapsed,
      perSecond: acked / elapsed,
      generatorCpu: (cpu.user + cpu.system) / 1e6 / elapsed,
    }
  }

  private async settle(): Promise<void> {
    if (this.inflight === 0) return
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      this.settled = resolve
      timer = setTimeout(() => {
        this.fail(new Error(`${this.inflight} publishes still unacknowledged after ${SETTLE_TIMEOUT_MS} ms`))
        resolve()
      }, SETTLE_TIMEOUT_MS)
    })
    clearTimeout(timer)
    this.settled = undefined
  }

  /** Disconnects cleanly (DISCONNECT), or forcibly if the broker does not answer. */
  async close(): Promise<void> {
    this.closing = true
    this.running = false
    await Promise.all(
      this.publishers.map(async ({ client }) => {
        const timer = setTimeout(() => client.end(true), 5_000)
        await client.endAsync().catch(() => {})
        clearTimeout(timer)
      }),
    )
  }
}
