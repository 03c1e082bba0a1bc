import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** What the gauges read when scraped. */
export interface MetricsReadings {
  /** The PostgreSQL pool (undefined on SQLite, which has one connection and no pool). */
  pool(): { total: number; idle: number; waiting: number } | undefined
  /**
   * How long, in seconds, the oldest webhook work the dispatchers owe has been due (an event not
   * fanned out, a delivery due to an active endpoint), across tenants; 0 if none.
   */
  webhooksOwedSeconds(): Promise<number>
}

/** Outcomes of a punch sent to the public API, one per punch (a batch counts each of its punches). */
export type PunchOutcome = 'created' | 'duplicate' | 'rejected'

/** Outcomes of a webhook attempt. */
export type DeliveryOutcome = 'succeeded' | 'failed' | 'refused_address' | 'lost_claim'

/** Request durations of an API are short; webhook attempts and slow clients fill the top buckets. */
const SECOND_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5]

/**
 * The cloud's Prometheus metrics, in a registry of the app's own (never prom-client's global one:
 * a process may build several apps). Every label has a fixed, small set of values: a route is its
 * pattern (`/api/public/v1/employees/:employeeCode`), never the URL; a punch is counted by outcome
 * and by the problem code that refused it; never a tenant, a credential, an employee or an endpoint,
 * which a client or tenant could multiply (docs/decisions/0089-cloud-metrics-listener.md).
 */
export class CloudMetrics {
  readonly registry = new Registry()
  private readonly requestSeconds: Histogram<'method' | 'route' | 'status_code'>
  private readonly punches: Counter<'outcome' | 'reason'>
  private readonly deliveries: Counter<'outcome'>
  private readonly querySeconds: Histogram<'database'>
  private readings: MetricsReadings | undefined

  constructor(
    private readonly database: 'sqlite' | 'postgres',
    /**
     * Also the process's own figures (memory, CPU, handles, event-loop lag): they are the process's,
     * and their event-loop monitor samples every 20 ms until the process ends, so only the one app
     * a `serve` process runs collects them, not every app a test builds.
     */
    options: { processMetrics?: boolean } = {},
  ) {
    const registers = [this.registry]
    if (options.processMetrics) {
      collectDefaultMetrics({
        register: this.registry,
        prefix: 'hajri_cloud_',
        eventLoopMonitoringPrecision: 20,
      })
    }
    this.requestSeconds = new Histogram({
      name: 'hajri_cloud_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: SECOND_BUCKETS,
      registers,
    })
    this.punches = new Counter({
      name: 'hajri_cloud_punches_total',
      help: 'Punches sent to the public API, by outcome, and by problem code when rejected.',
      labelNames: ['outcome', 'reason'],
      registers,
    })
    this.deliveries = new Counter({
      name: 'hajri_cloud_webhook_attempts_total',
      help: 'Webhook attempts this instance made, by outcome.',
      labelNames: ['outcome'],
      registers,
    })
    this.querySeconds = new Histogram({
      name: 'hajri_cloud_db_query_duration_seconds',
      help: 'Time of each database statement, as the cloud waited for it.',
      labelNames: ['database'],
      buckets: QUERY_BUCKETS,
      registers,
    })
    const readings = () => this.readings
    const pool = (
      name: string,
      help: string,
      read: (p: { total: number; idle: number; waiting: number }) => number,
    ) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const p = readings()?.pool()
          this.set(p ? read(p) : 0)
        },
      })
    pool(
      'hajri_cloud_db_pool_connections',
      'Connections the PostgreSQL pool holds (0 on SQLite).',
      (p) => p.total,
    )
    pool(
      'hajri_cloud_db_pool_in_use',
      'Pool connections running a statement or transaction.',
      (p) => p.total - p.idle,
    )
    pool('hajri_cloud_db_pool_waiting', 'Requests waiting for a pool connection.', (p) => p.waiting)
    new Gauge({
      name: 'hajri_cloud_webhook_oldest_due_seconds',
      help: 'How long the oldest webhook delivery due to an active endpoint (or event not yet fanned out) has waited, across tenants (0 if none).',
      registers,
      async collect() {
        const read = readings()
        this.set(read ? await read.webhooksOwedSeconds() : 0)
      },
    })
  }

  /** What the gauges read, once the stores exist. */
  readFrom(readings: MetricsReadings): void {
    this.readings = readings
  }

  request(method: string, route: string, statusCode: number, seconds: number): void {
    this.requestSeconds.observe({ method, route, status_code: statusCode }, seconds)
  }

  punch(outcome: PunchOutcome, reason = ''): void {
    this.punches.inc({ outcome, reason })
  }

  attempt(outcome: DeliveryOutcome): void {
    this.deliveries.inc({ outcome })
  }

  query(seconds: number): void {
    this.querySeconds.observe({ database: this.database }, seconds)
  }
}
