import { expect, it } from 'vitest'
import type { SuccessfulAttempt } from '../../../../cloud/features/webhooks/delivery-store.js'
import { Stores } from '../../../../cloud/stores.js'
import { newId } from '../../../../shared/ids.js'
import { describeOnDatabase, type TestCloud } from '../../../support/cloud-harness.js'
import { createEndpoint, newTenantConsole } from './webhook-kit.js'

/**
 * On PostgreSQL the dispatcher writes the successes of attempts that finish together in one
 * statement. Each must be written, or not, exactly as the recorder's transaction would write it
 * alone: under its own claim, in its own tenant, with its own endpoint healed.
 */
describeOnDatabase('postgres', 'recording successful attempts together', (cloud) => {
  const LEASE = 1_000_000

  /** A claimed delivery of a new event to `endpointId`, written as the fan-out would. */
  async function claimedDelivery(tenantId: string, endpointId: string, lease: number) {
    const at = cloud.now()
    const eventId = newId('webhookEvent')
    const body = '{"type":"test.ping","timestamp":"2026-11-29T00:00:00Z","data":{}}'
    await cloud.database.db
      .insertInto('webhook_events')
      .values({
        id: eventId,
        tenant_id: tenantId,
        type: 'test.ping',
        body,
        body_bytes: body.length,
        body_sha256: '0'.repeat(64),
        endpoint_id: endpointId,
        created_at: at,
        fanned_out: 1,
      })
      .execute()
    const delivery = {
      id: newId('webhookDelivery'),
      tenant_id: tenantId,
      endpoint_id: endpointId,
      event_id: eventId,
      event_type: 'test.ping',
      status: 'pending',
      attempts: 0,
      next_attempt_at: at,
      next_trigger: 'automatic',
      last_attempt_at: null,
      claimed_until: lease,
      created_at: at,
      updated_at: at,
    }
    await cloud.database.db.insertInto('webhook_deliveries').values(delivery).execute()
    return delivery
  }

  function success(delivery: SuccessfulAttempt['delivery'], lease: number): SuccessfulAttempt {
    return {
      delivery,
      lease,
      at: cloud.now(),
      attempt: {
        id: newId('webhookAttempt'),
        number: 1,
        trigger: 'automatic',
        started_at: cloud.now(),
        duration_ms: 12,
        response_status: 204,
        response_body: '',
        error: null,
      },
    }
  }

  async function endpointIn(c: TestCloud) {
    const api = await newTenantConsole(c)
    const { id } = await createEndpoint(api, { url: 'https://hooks.example.com/hajri' })
    return { tenantId: api.tenantId, endpointId: id }
  }

  it('writes each under its own claim and tenant, answering in order, and heals each endpoint', async () => {
    const a = await endpointIn(cloud)
    const b = await endpointIn(cloud)
    await cloud.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: 1 })
      .where('tenant_id', '=', b.tenantId)
      .where('id', '=', b.endpointId)
      .execute()
    const first = await claimedDelivery(a.tenantId, a.endpointId, LEASE)
    const lost = await claimedDelivery(a.tenantId, a.endpointId, LEASE + 1)
    const second = await claimedDelivery(b.tenantId, b.endpointId, LEASE)
    // The same delivery id under another tenant is not this delivery.
    const misfiled = { ...second, tenant_id: a.tenantId }

    const stores = new Stores(cloud.database.db)
    expect(stores.deliveries.recordsSuccessesInOneStatement()).toBe(true)
    const inputs = [
      success(first, LEASE),
      success(lost, LEASE),
      success(misfiled, LEASE),
      success(second, LEASE),
    ]
    const answers = await stores.deliveries.recordSuccesses(inputs)
    expect(answers).toEqual([
      { owned: true, endpointStatus: 'active' },
      // Its claim is another dispatcher's now: nothing written.
      { owned: false, endpointStatus: 'active' },
      { owned: false, endpointStatus: null },
      { owned: true, endpointStatus: 'active' },
    ])

    const rows = await cloud.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'tenant_id', 'status', 'attempts', 'claimed_until'])
      .where('id', 'in', [first.id, lost.id, second.id])
      .orderBy('id')
      .execute()
    const byId = new Map(rows.map((r) => [r.id, r]))
    expect(byId.get(first.id)).toMatchObject({ status: 'succeeded', attempts: 1, claimed_until: null })
    expect(byId.get(lost.id)).toMatchObject({ status: 'pending', attempts: 0 })
    expect(Number(byId.get(lost.id)?.claimed_until)).toBe(LEASE + 1)
    expect(byId.get(second.id)).toMatchObject({ tenant_id: b.tenantId, status: 'succeeded', attempts: 1 })

    const attempts = await cloud.database.db
      .selectFrom('webhook_attempts')
      .select(['id', 'tenant_id', 'delivery_id', 'response_status'])
      .where('delivery_id', 'in', [first.id, lost.id, second.id])
      .execute()
    expect(attempts.map((r) => [r.id, r.tenant_id, r.delivery_id, r.response_status]).sort()).toEqual(
      [
        [inputs[0]?.attempt.id, a.tenantId, first.id, 204],
        [inputs[3]?.attempt.id, b.tenantId, second.id, 204],
      ].sort(),
    )
    const healed = await cloud.database.db
      .selectFrom('webhook_endpoints')
      .select('failing_since')
      .where('tenant_id', '=', b.tenantId)
      .where('id', '=', b.endpointId)
      .executeTakeFirstOrThrow()
    expect(healed.failing_since).toBeNull()
  })

  it('answers a deleted endpoint with no status, so its run stops', async () => {
    const a = await endpointIn(cloud)
    const delivery = await claimedDelivery(a.tenantId, a.endpointId, LEASE)
    await cloud.database.db
      .updateTable('webhook_endpoints')
      .set({ deleted_at: cloud.now() })
      .where('tenant_id', '=', a.tenantId)
      .where('id', '=', a.endpointId)
      .execute()
    const [answer] = await new Stores(cloud.database.db).deliveries.recordSuccesses([
      success(delivery, LEASE),
    ])
    expect(answer).toEqual({ owned: true, endpointStatus: null })
  })
})
