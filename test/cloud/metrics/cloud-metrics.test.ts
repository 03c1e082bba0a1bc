import { afterAll, beforeAll, expect, it } from 'vitest'
import { type MetricsListener, startMetricsListener } from '../../../cloud/metrics/metrics-listener.js'
import { bearer, describeEachDatabase, employee, TEST_ACTOR } from '../../support/cloud-harness.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { consoleFor, createEndpoint, waitUntil } from '../features/webhooks/webhook-kit.js'

const PUNCHES = '/api/public/v1/attendance/punches'

/**
 * The families an operator's dashboard reads (docs/operators/running.md#metrics); the process's own
 * (event-loop lag) only `serve` collects: test/cloud/cli.test.ts scrapes them.
 */
const FAMILIES = [
  'hajri_cloud_http_request_duration_seconds',
  'hajri_cloud_punches_total',
  'hajri_cloud_webhook_attempts_total',
  'hajri_cloud_webhook_oldest_due_seconds',
  'hajri_cloud_db_pool_connections',
  'hajri_cloud_db_pool_in_use',
  'hajri_cloud_db_pool_waiting',
  'hajri_cloud_db_query_duration_seconds',
]

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

/**
 * The cloud's metrics after real traffic, scraped from their listener: every family is there, the
 * counts follow what happened, and no label carries a tenant id, a credential, an employee code or a
 * URL's ids.
 */
describeEachDatabase(
  'the cloud metrics',
  (cloud) => {
    let listener: MetricsListener
    let tenantId: string
    let key: string
    const scrape = async () => {
      const res = await fetch(listener.url)
      expect(res.status).toBe(200)
      return res.text()
    }
    /** The value of one series, by its name and labels as the text shows them. */
    const value = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `))
      return line === undefined ? undefined : Number(line.slice(series.length + 1))
    }

    beforeAll(async () => {
      listener = await startMetricsListener(cloud.app.metrics.registry, '127.0.0.1', 0)
      tenantId = await cloud.createTenant()
      key = await cloud.createApiKey(tenantId, ['attendance:write', 'attendance:read', 'employees:read'])
      await cloud.upsertEmployees(tenantId, [employee('M001'), employee('M002', { status: 'INACTIVE' })])
    })
    afterAll(() => listener?.close())

    it('counts requests by route pattern, punches by outcome, and attempts; labels name no tenant', async () => {
      const admin = await consoleFor(cloud, tenantId)
      const path = `/metrics-${cloud.kind}`
      await createEndpoint(admin, { url: receiver.url(path) })
      const post = (body: object) =>
        cloud.app.inject({ method: 'POST', url: PUNCHES, headers: bearer(key), payload: body })
      const punch = { employeeCode: 'M001', punchType: 'IN', externalId: `metrics-${cloud.kind}-1` }
      expect((await post(punch)).statusCode).toBe(201)
      expect((await post(punch)).statusCode).toBe(201)
      expect((await post({ ...punch, employeeCode: 'M404', externalId: undefined })).statusCode).toBe(422)
      const batch = await cloud.app.inject({
        method: 'POST',
        url: `${PUNCHES}/batch`,
        headers: bearer(key),
        payload: {
          punches: [
            { employeeCode: 'M002', punchType: 'OUT' },
            { employeeCode: 'M001', punchType: 'OUT' },
          ],
        },
      })
      expect(batch.json().summary).toMatchObject({ created: 1, rejected: 1 })
      const employeeUrl = `/api/public/v1/employees/M001`
      expect(
        (await cloud.app.inject({ method: 'GET', url: employeeUrl, headers: bearer(key) })).statusCode,
      ).toBe(200)
      // A URL no route has, carrying the tenant id: it must not become a label.
      expect((await cloud.app.inject({ method: 'GET', url: `/nowhere/${tenantId}` })).statusCode).toBe(404)
      await receiver.waitFor(() => receiver.to(path).length >= 2)
      await waitUntil(
        async () =>
          (value(await scrape(), 'hajri_cloud_webhook_attempts_total{outcome="succeeded"}') ?? 0) >= 2,
        'the attempts counted',
      )

      const text = await scrape()
      for (const family of FAMILIES) expect(text, family).toContain(`# TYPE ${family} `)
      expect(value(text, 'hajri_cloud_punches_total{outcome="created",reason=""}')).toBe(2)
      expect(value(text, 'hajri_cloud_punches_total{outcome="duplicate",reason=""}')).toBe(1)
      expect(value(text, 'hajri_cloud_punches_total{outcome="rejected",reason="employee_not_found"}')).toBe(1)
      expect(value(text, 'hajri_cloud_punches_total{outcome="rejected",reason="employee_not_active"}')).toBe(
        1,
      )
      expect(
        value(
          text,
          'hajri_cloud_http_request_duration_seconds_count{method="GET",route="/api/public/v1/employees/:employeeCode",status_code="200"}',
        ),
      ).toBe(1)
      expect(
        value(
          text,
          'hajri_cloud_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}',
        ),
      ).toBeGreaterThanOrEqual(1)
      if (cloud.kind === 'postgres') {
        expect(value(text, 'hajri_cloud_db_pool_connections')).toBeGreaterThan(0)
      }
      // Every label value, of every series: none is a tenant's, a key's or an employee's.
      const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1] as string)
      expect(labelValues.length).toBeGreaterThan(20)
      const forbidden = [tenantId, key, 'M001', 'M002', 'M404', admin.actor.split(':')[1] as string]
      for (const v of labelValues) for (const f of forbidden) expect(v, `label value ${v}`).not.toContain(f)
      expect(text).not.toContain(tenantId)
    })

    it('counts a failed attempt, and a delivery waiting out its retry is not owed', async () => {
      const admin = await consoleFor(cloud, tenantId)
      const path = `/metrics-failing-${cloud.kind}`
      receiver.respondAt(path, { status: 500 })
      await createEndpoint(admin, { url: receiver.url(path) })
      const failed = 'hajri_cloud_webhook_attempts_total{outcome="failed"}'
      const before = value(await scrape(), failed) ?? 0
      const punch = { employeeCode: 'M001', punchType: 'IN', externalId: `metrics-${cloud.kind}-failing` }
      const res = await cloud.app.inject({
        method: 'POST',
        url: PUNCHES,
        headers: bearer(key),
        payload: punch,
      })
      expect(res.statusCode).toBe(201)
      await waitUntil(async () => (value(await scrape(), failed) ?? 0) > before, 'the failed attempt counted')
      // The failed delivery waits for its retry (seconds away): the dispatchers owe nothing meanwhile.
      await waitUntil(
        async () => value(await scrape(), 'hajri_cloud_webhook_oldest_due_seconds') === 0,
        'nothing owed',
      )
    })

    it('serves nothing but the metrics, and the app serves no metrics', async () => {
      const base = listener.url.replace(/\/metrics$/, '')
      for (const other of ['/', '/healthz', '/metrics/', '/api/public/v1/employees']) {
        expect((await fetch(`${base}${other}`)).status, other).toBe(404)
      }
      expect((await fetch(listener.url, { method: 'POST', body: 'x' })).status).toBe(404)
      expect((await cloud.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    })
  },
  { webhooks: { allowlist: ['127.0.0.1'] } },
)

/**
 * The webhook gauge tells how long the oldest work the dispatchers owe has been due: an event not yet
 * fanned out, or a delivery due to an active endpoint. A paused endpoint's deliveries wait by the
 * tenant's choice and are not owed. No dispatcher runs here, and the clock is the test's.
 */
describeEachDatabase('the webhook backlog gauge', (cloud) => {
  const GAUGE = 'hajri_cloud_webhook_oldest_due_seconds'
  const gauge = async () => {
    const line = (await cloud.app.metrics.registry.metrics())
      .split('\n')
      .find((l) => l.startsWith(`${GAUGE} `))
    return Number(line?.slice(GAUGE.length + 1))
  }

  it('is the age of the oldest event not fanned out or delivery due, paused endpoints left out', async () => {
    const start = Math.floor(cloud.now())
    cloud.fixedNow = start
    const tenantId = await cloud.createTenant()
    const key = await cloud.createApiKey(tenantId, ['attendance:write'])
    await cloud.upsertEmployees(tenantId, [employee('G001')])
    const admin = await consoleFor(cloud, tenantId)
    // Registering an endpoint first fans out every event so far (to no one): nothing is owed.
    const first = await createEndpoint(admin, { url: 'https://receiver.example.test/first' })
    expect(await gauge()).toBe(0)

    const punch = { employeeCode: 'G001', punchType: 'IN' }
    const res = await cloud.app.inject({ method: 'POST', url: PUNCHES, headers: bearer(key), payload: punch })
    expect(res.statusCode).toBe(201)
    cloud.fixedNow = start + 90_000_000
    expect(await gauge()).toBe(90)

    // A second endpoint fans the event out to the first: its delivery is due from the event's time.
    await createEndpoint(admin, { url: 'https://receiver.example.test/second' })
    const deliveries = await admin.get('/webhook-deliveries')
    expect(deliveries.statusCode, deliveries.body).toBe(200)
    expect(deliveries.json().data.map((d: { endpointId: string }) => d.endpointId)).toEqual([first.id])
    cloud.fixedNow = start + 120_000_000
    expect(await gauge()).toBe(120)

    await cloud.services.webhookEndpoints.pause(tenantId, first.id, TEST_ACTOR)
    expect(await gauge()).toBe(0)
  })
})
