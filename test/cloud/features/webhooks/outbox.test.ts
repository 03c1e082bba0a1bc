import { sql } from 'kysely'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ingestPunches } from '../../../../cloud/features/punches/ingest.js'
import { WebhookDispatcher } from '../../../../cloud/features/webhooks/dispatcher.js'
import { WebhookSender } from '../../../../cloud/features/webhooks/webhook-sender.js'
import { createServices } from '../../../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../../cloud/settings/webhook-settings.js'
import { Stores } from '../../../../cloud/stores.js'
import {
  bearer,
  describeEachDatabase,
  employee,
  TEST_ACTOR,
  type TestCloud,
} from '../../../support/cloud-harness.js'
import { type ReceivedWebhook, WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  type ConsoleClient,
  catalogValidator,
  consoleFor,
  createEndpoint,
  newTenantConsole,
} from './webhook-kit.js'

// Events are written in the transaction of the change that emits them (an outbox,
// docs/decisions/0020-webhook-outbox.md): each change
// is told once, and none is told for a change that rolled back. An endpoint gets the events it asked for.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

/**
 * Waits until a test event sent now reaches the endpoint, and returns what reached it before. An
 * endpoint's deliveries go out oldest first, one at a time, so anything emitted before the marker
 * has arrived by then: what is missing was never sent.
 */
async function everythingBefore(
  api: ConsoleClient,
  endpointId: string,
  path: string,
): Promise<ReceivedWebhook[]> {
  const marker = await api.post(`/webhooks/${endpointId}/test`)
  expect(marker.statusCode).toBe(202)
  const messageId = marker.json().messageId
  await receiver.waitFor(() => receiver.to(path).some((r) => r.headers['webhook-id'] === messageId))
  const received = receiver.to(path)
  return received.slice(
    0,
    received.findIndex((r) => r.headers['webhook-id'] === messageId),
  )
}

/** Whether any event of the tenant, fanned out or not, mentions `text`. */
async function eventsMentioning(cloud: TestCloud, tenantId: string, text: string) {
  return cloud.database.db
    .selectFrom('webhook_events')
    .select(['type', 'body'])
    .where('tenant_id', '=', tenantId)
    .where('body', 'like', `%${text}%`)
    .execute()
}

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('the webhook outbox', () => {
  describeEachDatabase(
    'the webhook outbox',
    (cloud) => {
      it('tells every endpoint that wants it of each change once: employees, API keys, OAuth apps, punches', async () => {
        const api = await newTenantConsole(cloud)
        const path = (name: string) => `/${name}-${cloud.kind}`
        const all = await createEndpoint(api, { url: receiver.url(path('all')) })
        const punches = await createEndpoint(api, {
          url: receiver.url(path('punches')),
          events: ['attendance.punch.created'],
        })
        const people = await createEndpoint(api, {
          url: receiver.url(path('people')),
          events: ['employee.updated', 'employee.created'],
        })

        await cloud.upsertEmployees(api.tenantId, [employee('O01')])
        await cloud.upsertEmployees(api.tenantId, [employee('O01', { department: 'Paint shop' })])
        // Unchanged: nothing to tell.
        await cloud.upsertEmployees(api.tenantId, [employee('O01', { department: 'Paint shop' })])
        const apiKey = await cloud.services.apiKeys.create(
          api.tenantId,
          { name: 'payroll', scopes: ['employees:read'] },
          TEST_ACTOR,
        )
        await cloud.services.apiKeys.revoke(api.tenantId, apiKey.id, TEST_ACTOR)
        // Revoked already: nothing to tell.
        await cloud.services.apiKeys.revoke(api.tenantId, apiKey.id, TEST_ACTOR)
        const app = await cloud.services.oauthApps.create(
          api.tenantId,
          { name: 'site agent', scopes: ['attendance:write'] },
          TEST_ACTOR,
        )
        await cloud.services.oauthApps.revoke(api.tenantId, app.id, TEST_ACTOR)
        const punchKey = await cloud.createApiKey(api.tenantId, ['attendance:write'])
        const punch = { employeeCode: 'O01', punchType: 'IN', externalId: `outbox-${cloud.kind}` }
        const post = (url: string, payload: object) =>
          cloud.app.inject({
            method: 'POST',
            url: `/api/public/v1/attendance/${url}`,
            headers: bearer(punchKey),
            payload,
          })
        const first = await post('punches', punch)
        expect(first.statusCode).toBe(201)
        // The same punch again, alone and in a batch beside a new one: only the new one is told.
        const again = await post('punches', punch)
        expect(again.headers['idempotent-replayed']).toBe('true')
        const batch = await post('punches/batch', {
          punches: [punch, { employeeCode: 'O01', punchType: 'OUT', externalId: `outbox-out-${cloud.kind}` }],
        })
        expect(batch.json().summary).toMatchObject({ created: 1, duplicate: 1 })

        const toAll = await everythingBefore(api, all.id, path('all'))
        expect(toAll.map((r) => r.json?.type)).toEqual([
          'employee.created',
          'employee.updated',
          'api_key.created',
          'api_key.revoked',
          'oauth_app.created',
          'oauth_app.revoked',
          'api_key.created',
          'attendance.punch.created',
          'attendance.punch.created',
        ])
        const validate = await catalogValidator(cloud)
        for (const request of toAll) expect(validate(request.json), request.json?.type).toEqual([])
        const [created, updated, keyCreated, keyRevoked, appCreated, appRevoked] = toAll.map(
          (r) => r.json?.data,
        )
        expect(created).toMatchObject({ employeeCode: 'O01', department: 'Assembly' })
        expect(updated).toMatchObject({ employeeCode: 'O01', department: 'Paint shop' })
        expect(keyCreated).toMatchObject({ id: apiKey.id, status: 'active' })
        expect(keyRevoked).toMatchObject({ id: apiKey.id, status: 'revoked' })
        expect(appCreated).toMatchObject({ id: app.id, clientId: app.clientId })
        expect(appRevoked).toMatchObject({ id: app.id })
        expect(toAll[7]?.json?.data).toEqual(first.json())
        expect(toAll[8]?.json?.data).toMatchObject({ punchType: 'OUT' })
        // Secrets are never in an event.
        const bodies = toAll.map((r) => r.body).join('\n')
        for (const secret of [apiKey.key, app.clientSecret, punchKey]) expect(bodies).not.toContain(secret)

        // Each endpoint's own filter.
        const toPunches = await everythingBefore(api, punches.id, path('punches'))
        expect(toPunches.map((r) => r.json?.data.externalId)).toEqual([
          `outbox-${cloud.kind}`,
          `outbox-out-${cloud.kind}`,
        ])
        const toPeople = await everythingBefore(api, people.id, path('people'))
        expect(toPeople.map((r) => r.json?.type)).toEqual(['employee.created', 'employee.updated'])
      })

      it('follows a change of the events an endpoint asks for', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/refilter-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path), events: ['employee.created'] })
        await cloud.upsertEmployees(api.tenantId, [employee('F01')])
        await cloud.upsertEmployees(api.tenantId, [employee('F01', { name: 'Renamed' })])
        const changed = await api.patch(`/webhooks/${id}`, { events: ['employee.updated'] })
        expect(changed.statusCode).toBe(200)
        expect(changed.json().events).toEqual(['employee.updated'])
        await cloud.upsertEmployees(api.tenantId, [employee('F02')])
        await cloud.upsertEmployees(api.tenantId, [employee('F02', { name: 'Renamed' })])
        const received = await everythingBefore(api, id, path)
        expect(received.map((r) => `${r.json?.type} ${r.json?.data.employeeCode}`)).toEqual([
          'employee.created F01',
          'employee.updated F02',
        ])
        const unknown = await api.post('/webhooks', { url: receiver.url('/x'), events: ['employee.deleted'] })
        expect(unknown.statusCode).toBe(400)
        expect(unknown.json().code).toBe('validation_failed')
      })

      it('tells nothing of an employee upsert that fails: the change and its events roll back together', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/rollback-employees-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        await cloud.upsertEmployees(api.tenantId, [employee('R-EXISTING')])
        // The database refuses one update of the batch, after the batch's inserts were made.
        await refuseEmployeeName(cloud, 'Refused')
        const failing = cloud.upsertEmployees(api.tenantId, [
          employee('R-NEW'),
          employee('R-EXISTING', { name: 'Refused' }),
        ])
        await expect(failing).rejects.toThrow(/refused/)

        expect(
          (await cloud.services.employees.list(api.tenantId, {})).data.map((e) => e.employeeCode),
        ).toEqual(['R-EXISTING'])
        expect(await eventsMentioning(cloud, api.tenantId, 'R-NEW')).toEqual([])
        const received = await everythingBefore(api, id, path)
        expect(received.map((r) => `${r.json?.type} ${r.json?.data.employeeCode}`)).toEqual([
          'employee.created R-EXISTING',
        ])
      })

      it('tells nothing of a punch ingest whose transaction rolls back after its events were written', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/rollback-punches-${cloud.kind}`
        const { id } = await createEndpoint(api, {
          url: receiver.url(path),
          events: ['attendance.punch.created'],
        })
        await cloud.upsertEmployees(api.tenantId, [employee('R01')])
        const externalId = `rolled-back-${cloud.kind}`
        let eventsWritten = 0
        const failing = ingestPunches(
          {
            outbox: cloud.services.outbox,
            attendance: cloud.services.attendanceQueue,
            stores: {
              read: cloud.services.stores.read,
              // The ingest's own work, in a real transaction, which then fails to commit.
              transaction: (work) =>
                cloud.database.db.transaction().execute(async (trx) => {
                  await work(new Stores(trx))
                  eventsWritten = (
                    await trx
                      .selectFrom('webhook_events')
                      .select('id')
                      .where('tenant_id', '=', api.tenantId)
                      .execute()
                  ).length
                  throw new Error('commit failed')
                }),
            },
          },
          { id: api.tenantId, timeZone: 'Asia/Kolkata', backfillDays: 30 },
          cloud.now(),
          [{ index: 0, input: { employeeCode: 'R01', punchType: 'IN', externalId } }],
          async () => {},
        )
        await expect(failing).rejects.toThrow('commit failed')
        // The event was written, in the transaction that then rolled back.
        expect(eventsWritten).toBeGreaterThan(0)
        expect(await eventsMentioning(cloud, api.tenantId, externalId)).toEqual([])
        expect(await everythingBefore(api, id, path)).toEqual([])
      })
    },
    { webhooks: { retrySchedule: [0, 1], allowlist: ['127.0.0.1'] } },
  )

  // No dispatcher runs in this app: the test starts one late, as after an outage or under a backlog.
  describeEachDatabase('the webhook outbox, with a dispatcher that lags', (cloud) => {
    it('sends each event by the endpoints as they were when it was emitted, however late the fan-out', async () => {
      const settings = { ...DEFAULT_WEBHOOK_SETTINGS, retrySchedule: [0], allowlist: ['127.0.0.1'] }
      // The app's own services, with an allowlist that lets them register the local receiver.
      const services = createServices(cloud.database, { now: cloud.now, webhooks: settings })
      const tenantId = await cloud.createTenant()
      const filteredPath = `/lag-filtered-${cloud.kind}`
      const latePath = `/lag-late-${cloud.kind}`
      const endpoints = services.webhookEndpoints
      const filtered = await endpoints.create(
        tenantId,
        { url: receiver.url(filteredPath), events: ['employee.created'] },
        TEST_ACTOR,
      )
      await services.employees.upsert(tenantId, [employee('F01')])
      await services.employees.upsert(tenantId, [employee('F01', { name: 'Renamed' })])
      await endpoints.update(tenantId, filtered.endpoint.id, { events: ['employee.updated'] }, TEST_ACTOR)
      await services.employees.upsert(tenantId, [employee('F02')])
      await services.employees.upsert(tenantId, [employee('F02', { name: 'Renamed' })])
      const late = await endpoints.create(tenantId, { url: receiver.url(latePath) }, TEST_ACTOR)
      await services.employees.upsert(tenantId, [employee('F03')])

      const dispatcher = new WebhookDispatcher({
        stores: services.stores,
        dialect: cloud.kind,
        secretBox: cloud.database.secretBox,
        outbox: services.outbox,
        audit: services.audit,
        sender: new WebhookSender({ policy: services.urlPolicy, timeoutSeconds: 5 }),
        settings,
        log: pino({ level: 'silent' }),
        now: cloud.now,
      })
      dispatcher.start()
      try {
        const api = await consoleFor(cloud, tenantId)
        const told = async (endpointId: string, path: string) =>
          (await everythingBefore(api, endpointId, path)).map(
            (r) => `${r.json?.type} ${r.json?.data.employeeCode}`,
          )
        expect(await told(filtered.endpoint.id, filteredPath)).toEqual([
          'employee.created F01',
          'employee.updated F02',
        ])
        expect(await told(late.endpoint.id, latePath)).toEqual(['employee.created F03'])
      } finally {
        await dispatcher.stop()
        services.urlPolicy.close()
      }
    })
  })
})

/** Makes the database refuse to give an employee this name (a trigger), as a constraint would. */
async function refuseEmployeeName(cloud: TestCloud, name: string): Promise<void> {
  const db = cloud.database.db
  if (cloud.kind === 'sqlite') {
    await sql
      .raw(
        `create trigger if not exists refuse_name before update on employees when new.name = '${name}'
         begin select raise(abort, 'name refused'); end`,
      )
      .execute(db)
    return
  }
  await sql
    .raw(
      `create or replace function refuse_name() returns trigger language plpgsql as $$
       begin if new.name = '${name}' then raise exception 'name refused'; end if; return new; end $$;
       create or replace trigger refuse_name before update on employees
       for each row execute function refuse_name();`,
    )
    .execute(db)
}
