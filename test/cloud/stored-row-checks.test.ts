/**
 * The oracle of fuzz-stored-records.test.ts must be able to fail: rows a faulty write would leave
 * (text with NUL, a punch of another tenant's employee, a delivery whose attempts do not add up, two
 * employees sharing an updatedAt) are reported, and well-formed ones are not.
 */
import { describe, expect, it } from 'vitest'
import { crossRowProblems } from './cross-row-checks.js'
import { rowChecker } from './stored-row-checks.js'

const NOW = Date.UTC(2026, 10, 21) * 1000
const check = rowChecker(() => NOW)
const T1 = 'ten_01JBZ6Y2RQ85JBK7SD0QYTR420'
const T2 = 'ten_01JBZ6Y2RQ85JBK7SD0QYTR421'
const E1 = 'emp_01JBZ6Y2RQ85JBK7SD0QYTR420'

const employee = (overrides: Record<string, unknown> = {}) => ({
  id: E1,
  tenant_id: T1,
  employee_code: 'E001',
  name: 'Asha Rao',
  email: 'asha@example.test',
  department: null,
  location: 'Pune',
  status: 'ACTIVE',
  created_at: NOW - 1000,
  updated_at: NOW - 500,
  ...overrides,
})

const tenant = (id: string) => ({
  id,
  name: 'Acme',
  time_zone: 'Asia/Kolkata',
  backfill_days: 90,
  last_change_us: NOW,
  created_at: NOW - 10_000,
})

describe('rowChecker', () => {
  it('passes a well-formed row', () => {
    expect(check('employees', employee())).toEqual([])
  })

  it('reports text a store cannot hold, control characters, a wrong enum and a missing column', () => {
    expect(check('employees', employee({ name: 'Asha\u0000' }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/employees\.name: text a store cannot hold/)]),
    )
    expect(check('employees', employee({ department: 'Paint\tShop' }))).toEqual([
      expect.stringMatching(/employees\.department/),
    ])
    expect(check('employees', employee({ location: 'a\ud800b' }))).toEqual([
      expect.stringMatching(/employees\.location: text a store cannot hold/),
    ])
    expect(check('employees', employee({ status: 'RETIRED' }))).toEqual([expect.stringMatching(/status/)])
    const { email: _email, ...withoutEmail } = employee()
    expect(check('employees', withoutEmail)).toEqual(['employees.email: missing'])
  })

  it('reports a webhook event whose data breaks its documented schema', () => {
    const body = JSON.stringify({
      type: 'employee.created',
      timestamp: '2026-11-21T09:00:00Z',
      data: { id: 1 },
    })
    const problems = check('webhook_events', {
      id: 'msg_01JBZ6Y2RQ85JBK7SD0QYTR420',
      tenant_id: T1,
      type: 'employee.created',
      body,
      body_bytes: Buffer.byteLength(body),
      body_sha256: '0'.repeat(64),
      endpoint_id: null,
      created_at: NOW,
      fanned_out: 0,
    })
    expect(problems).toEqual([expect.stringMatching(/\.body:/), expect.stringMatching(/\.body_sha256:/)])
  })
})

describe('crossRowProblems', () => {
  it('reports a punch of another tenant, a delivery whose attempts do not add up, and a shared updatedAt', () => {
    const rows = [
      { table: 'tenants' as const, row: tenant(T1) },
      { table: 'tenants' as const, row: tenant(T2) },
      { table: 'employees' as const, row: employee() },
      {
        table: 'employees' as const,
        row: employee({ id: 'emp_01JBZ6Y2RQ85JBK7SD0QYTR421', employee_code: 'E002' }),
      },
      {
        table: 'punches' as const,
        row: { id: 'pun_01JBZ6Y2RQ85JBK7SD0QYTR420', tenant_id: T2, employee_id: E1, employee_code: 'E001' },
      },
      {
        table: 'webhook_deliveries' as const,
        row: {
          id: 'dlv_01JBZ6Y2RQ85JBK7SD0QYTR420',
          tenant_id: T1,
          endpoint_id: null,
          event_id: null,
          attempts: 2,
        },
      },
    ]
    expect(crossRowProblems(rows)).toEqual([
      expect.stringMatching(/punches .*employee_id → employees .*: another tenant's/),
      expect.stringMatching(/webhook_deliveries .*: attempts 2, attempt rows 0/),
      expect.stringMatching(/the same updated_at in one tenant/),
    ])
  })

  it('passes consistent rows', () => {
    expect(
      crossRowProblems([
        { table: 'tenants', row: tenant(T1) },
        { table: 'employees', row: employee() },
        {
          table: 'punches',
          row: {
            id: 'pun_01JBZ6Y2RQ85JBK7SD0QYTR420',
            tenant_id: T1,
            employee_id: E1,
            employee_code: 'E001',
          },
        },
      ]),
    ).toEqual([])
  })
})
