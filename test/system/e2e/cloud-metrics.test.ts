/**
 * `hajri-cloud serve` as a real process with HAJRI_METRICS_PORT set, on SQLite and on PostgreSQL:
 * after real traffic (punches stored and refused, a webhook delivered to a local receiver, GETs),
 * its metrics listener serves every family with the labels docs/operators/running.md#metrics lists,
 * including those only `serve` has (the process's and event loop's, statement durations, the
 * PostgreSQL pool); no label value is a tenant id, a credential or an employee code; the API's port
 * has no /metrics and the listener serves nothing else.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseKind } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { freePort, waitFor } from '../../support/e2e-kit.js'
import { postgresAvailability } from '../../support/services.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { openWebhookFixture, type WebhookFixture } from './webhook-fixture.js'

const postgres = await postgresAvailability()

const PUNCHES = '/api/public/v1/attendance/punches'

const FAMILIES = [
  'hajri_cloud_http_request_duration_seconds',
  'hajri_cloud_punches_total',
  'hajri_cloud_webhook_attempts_total',
  'hajri_cloud_webhook_oldest_due_seconds',
  'hajri_cloud_db_pool_connections',
  'hajri_cloud_db_pool_in_use',
  'hajri_cloud_db_pool_waiting',
  'hajri_cloud_db_query_duration_seconds',
  'hajri_cloud_nodejs_eventloop_lag_seconds',
  'hajri_cloud_nodejs_eventloop_lag_p99_seconds',
  'hajri_cloud_process_resident_memory_bytes',
]

const KINDS: { kind: DatabaseKind; skipReason: string | undefined }[] = [
  { kind: 'sqlite', skipReason: undefined },
  { kind: 'postgres', skipReason: postgres.skipReason },
]

/** The value of one series, by its name and labels as the text shows them. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe.each(KINDS)('hajri-cloud serve metrics [$kind]', ({ kind, skipReason }) => {
  const receiver = new WebhookReceiver()
  let fixture: WebhookFixture
  let cloud: CloudProcess
  let dir = ''
  let metricsUrl = ''

  beforeAll(async () => {
    if (skipReason) return
    await receiver.start()
    fixture = await openWebhookFixture(kind, {
      receiverUrl: (path) => receiver.url(path),
      endpointPaths: ['/metrics-hook'],
      employees: 2,
    })
    dir = await mkdtemp(join(tmpdir(), 'hajri-metrics-'))
    const metricsPort = await freePort()
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
    cloud = new CloudProcess({
      env: {
        ...fixture.serveEnv,
        HAJRI_PORT: String(await freePort()),
        HAJRI_METRICS_PORT: String(metricsPort),
      },
      logPath: join(dir, 'cloud.log'),
    })
    await cloud.start()
  })

  afterAll(async () => {
    if (skipReason) return
    await cloud?.stop()
    await cloud?.dispose()
    await fixture?.close()
    await receiver.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it.skipIf(skipReason !== undefined)(
    `serves every family apart from the API, naming no tenant${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    async () => {
      const { apiKey, tenant, employeeCodes } = fixture
      const post = (body: object) =>
        fetch(`${cloud.url}${PUNCHES}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      expect((await post({ employeeCode: employeeCodes[0], punchType: 'IN' })).status).toBe(201)
      expect((await post({ employeeCode: 'Z999', punchType: 'IN' })).status).toBe(422)
      // A URL no route has, carrying the tenant id.
      expect((await fetch(`${cloud.url}/nowhere/${tenant.id}`)).status).toBe(404)
      expect((await fetch(`${cloud.url}/metrics`)).status).toBe(404)
      await receiver.waitFor(() => receiver.to('/metrics-hook').length >= 1)

      const scrape = async () => {
        const res = await fetch(metricsUrl)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
        return res.text()
      }
      const text = await waitFor(async () => {
        const t = await scrape()
        return (value(t, 'hajri_cloud_webhook_attempts_total{outcome="succeeded"}') ?? 0) >= 1 ? t : undefined
      }, 'the webhook attempt counted')

      for (const family of FAMILIES) expect(text, family).toContain(`# TYPE ${family} `)
      expect(value(text, 'hajri_cloud_punches_total{outcome="created",reason=""}')).toBe(1)
      expect(value(text, 'hajri_cloud_punches_total{outcome="rejected",reason="employee_not_found"}')).toBe(1)
      expect(
        value(
          text,
          `hajri_cloud_http_request_duration_seconds_count{method="POST",route="${PUNCHES}",status_code="201"}`,
        ),
      ).toBe(1)
      expect(
        value(
          text,
          'hajri_cloud_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}',
        ),
      ).toBe(2)
      expect(value(text, `hajri_cloud_db_query_duration_seconds_count{database="${kind}"}`)).toBeGreaterThan(
        0,
      )
      if (kind === 'postgres') expect(value(text, 'hajri_cloud_db_pool_connections')).toBeGreaterThan(0)
      expect(value(text, 'hajri_cloud_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0)

      const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1] as string)
      const forbidden = [tenant.id, apiKey, 'Z999', ...employeeCodes, ...fixture.endpoints.map((e) => e.id)]
      for (const v of labelValues) for (const f of forbidden) expect(v, `label value ${v}`).not.toContain(f)
      for (const f of forbidden) expect(text).not.toContain(f)

      const base = metricsUrl.replace(/\/metrics$/, '')
      for (const other of ['/', '/healthz', '/readyz', PUNCHES, '/metrics/x']) {
        expect((await fetch(`${base}${other}`)).status, other).toBe(404)
      }
      expect((await fetch(metricsUrl, { method: 'POST', body: 'x' })).status).toBe(404)
    },
  )
})
