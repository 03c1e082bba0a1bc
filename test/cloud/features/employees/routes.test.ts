import { beforeAll, expect, it } from 'vitest'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

describeEachDatabase('employee directory API', (cloud) => {
  let tenantId: string
  let key: string

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    key = await cloud.createApiKey(tenantId, ['employees:read'])
    await cloud.upsertEmployees(tenantId, [
      employee('E001', { name: 'Asha Patil' }),
      employee('E002', { status: 'INACTIVE' }),
      employee('E003', { email: null, department: null, location: null }),
      employee('E004', { status: 'TERMINATED' }),
      employee('E005'),
    ])
  })

  const list = (query = '') =>
    cloud.app.inject({ method: 'GET', url: `/api/public/v1/employees${query}`, headers: bearer(key) })

  it('lists employees with every field, in a stable order, with a null nextCursor at the end', async () => {
    const res = await list()
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.nextCursor).toBeNull()
    expect(body.data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual([
      'E001',
      'E002',
      'E003',
      'E004',
      'E005',
    ])
    expect(body.data[0]).toEqual({
      id: expect.stringMatching(/^emp_[0-9A-Z]{26}$/),
      employeeCode: 'E001',
      name: 'Asha Patil',
      email: 'e001@example.test',
      department: 'Assembly',
      location: 'Pune',
      status: 'ACTIVE',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    })
    expect(body.data[2]).toMatchObject({ email: null, department: null, location: null })
  })

  it('filters by status', async () => {
    const body = (await list('?status=ACTIVE')).json()
    expect(body.data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['E001', 'E003', 'E005'])
    const terminated = (await list('?status=TERMINATED')).json()
    expect(terminated.data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['E004'])
  })

  it('pages with an opaque cursor that carries the filter', async () => {
    const first = (await list('?status=ACTIVE&limit=2')).json()
    expect(first.data).toHaveLength(2)
    expect(typeof first.nextCursor).toBe('string')
    const second = (await list(`?limit=2&cursor=${first.nextCursor}`)).json()
    expect(second.data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['E005'])
    expect(second.nextCursor).toBeNull()
  })

  it('refuses a cursor given with a different filter', async () => {
    const first = (await list('?status=ACTIVE&limit=1')).json()
    const res = await list(`?status=INACTIVE&cursor=${first.nextCursor}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'invalid_cursor',
      errors: [{ in: 'query', pointer: '#/status' }],
    })
  })

  it('refuses a cursor that is not one of ours', async () => {
    for (const cursor of ['garbage', 'eyJrIjoxfQ', Buffer.from('{"k":[1,2,3]}').toString('base64url')]) {
      const res = await list(`?cursor=${cursor}`)
      expect(res.statusCode).toBe(400)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json().code).toBe('invalid_cursor')
    }
  })

  it.each(['0', '201', '-1', '1.5', 'ten'])('refuses limit=%s with a 400 naming the field', async (limit) => {
    const res = await list(`?limit=${limit}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      errors: [{ in: 'query', pointer: '#/limit' }],
    })
  })

  it('accepts limit 1 and 200, defaults to 50', async () => {
    expect((await list('?limit=1')).json().data).toHaveLength(1)
    expect((await list('?limit=200')).statusCode).toBe(200)
    const seed = Array.from({ length: 60 }, (_, i) => employee(`D${String(i).padStart(3, '0')}`))
    const other = await cloud.createTenant()
    await cloud.upsertEmployees(other, seed)
    const otherKey = await cloud.createApiKey(other, ['employees:read'])
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees',
      headers: bearer(otherKey),
    })
    expect(res.json().data).toHaveLength(50)
  })

  it('refuses an unknown status and unknown query parameters', async () => {
    expect((await list('?status=RETIRED')).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ pointer: '#/status' }],
    })
    expect((await list('?updated_since=2026-01-01T00:00:00Z')).json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ pointer: '#/updated_since', message: 'is not a known field' }],
    })
  })

  it('gets one employee by code, and 404s an unknown code', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees/E001',
      headers: bearer(key),
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ employeeCode: 'E001', name: 'Asha Patil' })
    const missing = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees/E999',
      headers: bearer(key),
    })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ code: 'employee_not_found', status: 404 })
  })

  it('syncs incrementally: updatedSince is inclusive and ordered by updatedAt', async () => {
    const all = (await list()).json().data as { employeeCode: string; updatedAt: string }[]
    const e003 = all.find((e) => e.employeeCode === 'E003')!
    await cloud.upsertEmployees(tenantId, [employee('E001', { name: 'Asha Patil-Deshmukh' })])
    const body = (await list(`?updatedSince=${encodeURIComponent(e003.updatedAt)}`)).json()
    // E003 itself (inclusive), E004, E005, then E001 whose change is the newest.
    expect(body.data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual([
      'E003',
      'E004',
      'E005',
      'E001',
    ])
    expect(body.data[3].name).toBe('Asha Patil-Deshmukh')
    const stamps = body.data.map((e: { updatedAt: string }) => Date.parse(e.updatedAt))
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps)
  })

  it('gives every change in a tenant its own updatedAt, even in one import', async () => {
    const body = (await list('?limit=200')).json()
    const stamps = new Set(body.data.map((e: { updatedAt: string }) => e.updatedAt))
    expect(stamps.size).toBe(body.data.length)
  })

  it('does not touch updatedAt when an import changes nothing', async () => {
    const before = (await list()).json().data
    const summary = await cloud.upsertEmployees(tenantId, [employee('E005')])
    expect(summary).toEqual({ created: 0, updated: 0, unchanged: 1 })
    expect((await list()).json().data).toEqual(before)
  })

  it('needs an RFC 3339 updatedSince with an offset', async () => {
    for (const since of ['2026-11-21', '2026-11-21T09:00:00', '2026-13-01T00:00:00Z', 'yesterday']) {
      const res = await list(`?updatedSince=${encodeURIComponent(since)}`)
      expect(res.statusCode).toBe(400)
      expect(res.json().errors[0]).toMatchObject({ in: 'query', pointer: '#/updatedSince' })
    }
  })
})
