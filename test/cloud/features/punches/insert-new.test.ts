import { beforeAll, expect, it } from 'vitest'
import { WebhookOutbox } from '../../../../cloud/features/webhooks/outbox.js'
import { Stores } from '../../../../cloud/stores.js'
import { newId } from '../../../../shared/ids.js'
import { nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, employee } from '../../../support/cloud-harness.js'

/**
 * PunchStore.insertNew, the single-punch path's one statement: on PostgreSQL the punch, its event and
 * its day are written together or not at all, and nothing is written for a punch the full path must
 * answer. On SQLite it declines (undefined): the single punch there is insertNewFromEmployee
 * (insert-new-from-employee.test.ts).
 */
describeEachDatabase('PunchStore.insertNew', (cloud) => {
  let tenantId: string
  let otherTenantId: string
  const outbox = new WebhookOutbox(nowMicros)

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    otherTenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001'), employee('E002', { status: 'INACTIVE' })])
    await cloud.upsertEmployees(otherTenantId, [employee('X001')])
  })

  const attempt = (employeeCode: string, externalId: string | null, tenant = tenantId) => {
    const now = nowMicros()
    const row = {
      id: newId('punch'),
      employee_code: employeeCode,
      punch_type: 'IN',
      punched_at: now - 60_000_000,
      received_at: now,
      device_id: 'gate "1"',
      source: null,
      external_id: externalId,
      fingerprint: `fp-${externalId}`,
    }
    const [event] = outbox.rows(tenant, [{ type: 'attendance.punch.created', data: { id: row.id } as never }])
    const day = { employee_code: employeeCode, local_date: '2026-11-20', queued_at: now }
    const store = new Stores(cloud.database.db).punches
    return { row, event, result: store.insertNew(tenant, row, event as NonNullable<typeof event>, day) }
  }
  const written = async (punchId: string, eventId: string | undefined) => {
    const { db } = cloud.database
    const punch = await db.selectFrom('punches').selectAll().where('id', '=', punchId).executeTakeFirst()
    const event = await db
      .selectFrom('webhook_events')
      .select(['tenant_id', 'type', 'body_bytes', 'fanned_out'])
      .where('id', '=', eventId ?? '')
      .executeTakeFirst()
    return { punch, event }
  }
  const queuedDays = (tenant: string, code: string) =>
    cloud.database.db
      .selectFrom('attendance_dirty')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('employee_code', '=', code)
      .execute()

  it('stores a new punch with its event and its day, all three, or declines on SQLite', async () => {
    const { row, event, result } = attempt('E001', 'new-1')
    const inserted = await result
    if (cloud.kind === 'sqlite') {
      expect(inserted).toBeUndefined()
      expect((await written(row.id, event?.id)).punch).toBeUndefined()
      return
    }
    expect(inserted).toBe(true)
    const { punch, event: stored } = await written(row.id, event?.id)
    expect(punch).toMatchObject({ ...row, tenant_id: tenantId })
    expect(Number(punch?.punched_at)).toBe(row.punched_at)
    expect(stored).toMatchObject({ tenant_id: tenantId, type: 'attendance.punch.created', fanned_out: 0 })
    expect(await queuedDays(tenantId, 'E001')).toHaveLength(1)
  })

  // SQLite declines every punch (above): what it refuses is the transaction path's to say.
  if (cloud.kind !== 'postgres') return
  it('writes nothing for a stored externalId, an inactive or unknown employee, or another tenant’s employee', async () => {
    const refusals = [
      attempt('E001', 'new-1'),
      attempt('E002', 'inactive-1'),
      attempt('E404', 'unknown-1'),
      attempt('X001', 'foreign-1'),
    ]
    for (const { row, event, result } of refusals) {
      expect(await result, row.employee_code).toBe(false)
      expect(await written(row.id, event?.id), row.employee_code).toEqual({
        punch: undefined,
        event: undefined,
      })
    }
    expect(await queuedDays(tenantId, 'E002')).toEqual([])
    expect(await queuedDays(tenantId, 'X001')).toEqual([])
    // Without an externalId nothing collides: each is a punch of its own.
    expect(await attempt('E001', null).result).toBe(true)
    expect(await attempt('E001', null).result).toBe(true)
  })
})
