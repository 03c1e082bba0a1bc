import { beforeAll, describe, expect, it } from 'vitest'
import { formatTimestamp, nowMicros } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

const PUNCHES = '/api/public/v1/attendance/punches'
const HOUR = 3_600_000_000
const DAY = 24 * HOUR

describeEachDatabase('punch ingestion API', (cloud) => {
  let tenantId: string
  let key: string

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    key = await cloud.createApiKey(tenantId, ['attendance:write', 'attendance:read'])
    await cloud.upsertEmployees(tenantId, [
      employee('E001'),
      employee('E002'),
      employee('E003', { status: 'INACTIVE' }),
      employee('E004', { status: 'TERMINATED' }),
    ])
  })

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    cloud.app.inject({
      method: 'POST',
      url: PUNCHES,
      headers: { ...bearer(key), ...headers },
      payload: body as object,
    })
  const batch = (punches: unknown[], headers: Record<string, string> = {}) =>
    cloud.app.inject({
      method: 'POST',
      url: `${PUNCHES}/batch`,
      headers: { ...bearer(key), ...headers },
      payload: { punches },
    })
  const get = (url: string) => cloud.app.inject({ method: 'GET', url, headers: bearer(key) })

  describe('one punch', () => {
    it('stores it and answers 201 with the record and a Location that reads it back', async () => {
      const res = await post({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: '2026-11-20T09:00:00+05:30',
        deviceId: 'gate-1',
        source: 'hajri-agent',
        externalId: 'one-1',
      })
      expect(res.statusCode).toBe(201)
      const punch = res.json()
      expect(punch).toEqual({
        id: expect.stringMatching(/^pun_/),
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: '2026-11-20T09:00:00+05:30',
        receivedAt: expect.stringMatching(/Z$/),
        deviceId: 'gate-1',
        source: 'hajri-agent',
        externalId: 'one-1',
      })
      expect(res.headers['idempotent-replayed']).toBeUndefined()
      expect(res.headers.location).toBe(`${PUNCHES}/${punch.id}`)
      const again = await get(res.headers.location as string)
      expect(again.statusCode).toBe(200)
      expect(again.json()).toEqual(punch)
    })

    it("shows punchedAt in the tenant's time zone whatever offset it came in", async () => {
      const res = await post({ employeeCode: 'E001', punchType: 'OUT', punchedAt: '2026-11-20T12:30:00Z' })
      expect(res.json().punchedAt).toBe('2026-11-20T18:00:00+05:30')
    })

    it('defaults punchedAt to the time of receipt', async () => {
      const before = nowMicros()
      const res = await post({ employeeCode: 'E002', punchType: 'IN' })
      expect(res.statusCode).toBe(201)
      const punch = res.json()
      expect(Date.parse(punch.punchedAt)).toBe(Date.parse(punch.receivedAt))
      expect(Date.parse(punch.receivedAt) * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    })

    it('accepts null for the optional fields', async () => {
      const res = await post({
        employeeCode: 'E002',
        punchType: 'OUT',
        punchedAt: null,
        deviceId: null,
        source: null,
        externalId: null,
      })
      expect(res.statusCode).toBe(201)
      expect(res.json()).toMatchObject({ deviceId: null, source: null, externalId: null })
    })

    it('refuses an unknown employee, and one who is not ACTIVE, with 422', async () => {
      const unknown = await post({ employeeCode: 'E999', punchType: 'IN' })
      expect(unknown.statusCode).toBe(422)
      expect(unknown.json()).toMatchObject({ status: 422, code: 'employee_not_found' })
      for (const code of ['E003', 'E004']) {
        const res = await post({ employeeCode: code, punchType: 'IN' })
        expect(res.statusCode).toBe(422)
        expect(res.json().code).toBe('employee_not_active')
      }
    })

    it('refuses a punch more than 5 minutes ahead, and one older than the backfill window', async () => {
      const now = nowMicros()
      const ahead = await post({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(now + 6 * 60_000_000),
      })
      expect(ahead.statusCode).toBe(422)
      expect(ahead.json().code).toBe('punched_at_in_future')
      const slightlyAhead = await post({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(now + 4 * 60_000_000),
      })
      expect(slightlyAhead.statusCode).toBe(201)
      const old = await post({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(now - 91 * DAY),
      })
      expect(old.statusCode).toBe(422)
      expect(old.json().code).toBe('punched_at_too_old')
      const withinWindow = await post({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(now - 89 * DAY),
      })
      expect(withinWindow.statusCode).toBe(201)
    })

    it('refuses malformed bodies with a 400 naming each field', async () => {
      const res = await post({
        employeeCode: '',
        punchType: 'in',
        punchedAt: '2026-11-20 09:00:00',
        colour: 'red',
      })
      expect(res.statusCode).toBe(400)
      const problem = res.json()
      expect(problem).toMatchObject({
        type: 'urn:hajri:problem:validation_failed',
        title: expect.any(String),
        code: 'validation_failed',
      })
      const pointers = problem.errors.map((e: { pointer: string }) => e.pointer).sort()
      expect(pointers).toEqual(
        ['#/colour', '#/employeeCode', '#/employeeCode', '#/punchType', '#/punchedAt'].sort(),
      )
    })
  })

  describe('idempotency', () => {
    it('replays a stored externalId with the original record, and stores nothing new', async () => {
      const body = {
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: '2026-11-19T08:00:00+05:30',
        externalId: 'ext-replay',
      }
      const first = await post(body)
      expect(first.statusCode).toBe(201)
      // The same instant written with another offset is the same punch.
      const second = await post({ ...body, punchedAt: '2026-11-19T02:30:00Z' })
      expect(second.statusCode).toBe(201)
      expect(second.headers['idempotent-replayed']).toBe('true')
      expect(second.json()).toEqual(first.json())
      const log = (
        await get(`${PUNCHES}?from=2026-11-19T00:00:00%2B05:30&to=2026-11-20T00:00:00%2B05:30`)
      ).json()
      expect(log.data.filter((p: { externalId: string }) => p.externalId === 'ext-replay')).toHaveLength(1)
    })

    it('refuses an externalId reused for a different punch with 422', async () => {
      await post({
        employeeCode: 'E001',
        punchType: 'IN',
        externalId: 'ext-reuse',
        punchedAt: '2026-11-19T09:00:00+05:30',
      })
      const res = await post({
        employeeCode: 'E001',
        punchType: 'OUT',
        externalId: 'ext-reuse',
        punchedAt: '2026-11-19T09:00:00+05:30',
      })
      expect(res.statusCode).toBe(422)
      expect(res.json().code).toBe('external_id_reused')
    })

    it('replays an Idempotency-Key with the original response, quoted or bare', async () => {
      const body = { employeeCode: 'E002', punchType: 'IN' }
      const first = await post(body, { 'idempotency-key': 'key-123' })
      expect(first.statusCode).toBe(201)
      for (const header of ['key-123', '"key-123"']) {
        const again = await post(body, { 'idempotency-key': header })
        expect(again.statusCode).toBe(201)
        expect(again.headers['idempotent-replayed']).toBe('true')
        expect(again.headers.location).toBe(first.headers.location)
        expect(again.json()).toEqual(first.json())
      }
    })

    it('refuses the same Idempotency-Key with a different body with 422 idempotency_key_reused', async () => {
      await post({ employeeCode: 'E002', punchType: 'IN' }, { 'idempotency-key': 'key-456' })
      const res = await post({ employeeCode: 'E002', punchType: 'OUT' }, { 'idempotency-key': 'key-456' })
      expect(res.statusCode).toBe(422)
      expect(res.json().code).toBe('idempotency_key_reused')
    })

    it('does not store a failed request under its key, so a corrected retry can succeed', async () => {
      const first = await post(
        { employeeCode: 'E050', punchType: 'IN' },
        { 'idempotency-key': 'key-late-employee' },
      )
      expect(first.json().code).toBe('employee_not_found')
      await cloud.upsertEmployees(tenantId, [employee('E050')])
      const retry = await post(
        { employeeCode: 'E050', punchType: 'IN' },
        { 'idempotency-key': 'key-late-employee' },
      )
      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBeUndefined()
    })

    it('stores one punch when the same request races itself', async () => {
      const body = { employeeCode: 'E001', punchType: 'OUT', punchedAt: '2026-11-18T18:00:00+05:30' }
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => post(body, { 'idempotency-key': 'key-race' })),
      )
      expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(201))
      expect(new Set(responses.map((r) => r.json().id)).size).toBe(1)
      const log = (
        await get(`${PUNCHES}?from=2026-11-18T18:00:00%2B05:30&to=2026-11-18T18:00:01%2B05:30`)
      ).json()
      expect(log.data).toHaveLength(1)
    })

    it('stores one punch when the same externalId races itself', async () => {
      const body = {
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: '2026-11-18T07:00:00+05:30',
        externalId: 'ext-race',
      }
      const responses = await Promise.all(Array.from({ length: 8 }, () => post(body)))
      expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(201))
      expect(new Set(responses.map((r) => r.json().id)).size).toBe(1)
      expect(responses.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    })

    it('refuses an Idempotency-Key that is empty or not printable ASCII', async () => {
      for (const header of ['""', 'x'.repeat(256)]) {
        const res = await post({ employeeCode: 'E001', punchType: 'IN' }, { 'idempotency-key': header })
        expect(res.statusCode).toBe(400)
        expect(['invalid_idempotency_key', 'validation_failed']).toContain(res.json().code)
      }
    })
  })

  describe('batch', () => {
    it('gives each punch its own result and a summary; one bad punch never fails the others', async () => {
      const res = await batch([
        { employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-17T09:00:00+05:30', externalId: 'b-1' },
        { employeeCode: 'E999', punchType: 'IN' },
        { employeeCode: 'E002', punchType: 'SIDEWAYS' },
        'not an object',
        { employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-17T09:00:00+05:30', externalId: 'b-1' },
        { employeeCode: 'E003', punchType: 'OUT' },
        { employeeCode: 'E002', punchType: 'OUT', punchedAt: '2026-11-17T18:00:00+05:30', externalId: 'b-2' },
        { employeeCode: 'E002', punchType: 'IN', punchedAt: '2026-11-17T18:00:00+05:30', externalId: 'b-2' },
      ])
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body.summary).toEqual({ received: 8, created: 2, duplicate: 1, rejected: 5 })
      const statuses = body.results.map((r: { index: number; status: string }) => [r.index, r.status])
      expect(statuses).toEqual([
        [0, 'created'],
        [1, 'rejected'],
        [2, 'rejected'],
        [3, 'rejected'],
        [4, 'duplicate'],
        [5, 'rejected'],
        [6, 'created'],
        [7, 'rejected'],
      ])
      expect(body.results[1].problem).toMatchObject({ code: 'employee_not_found', status: 422 })
      expect(body.results[2].problem).toMatchObject({
        code: 'validation_failed',
        errors: [{ in: 'body', pointer: '#/punches/2/punchType' }],
      })
      expect(body.results[3].problem.errors[0].pointer).toBe('#/punches/3')
      expect(body.results[4].punch).toEqual(body.results[0].punch)
      expect(body.results[5].problem.code).toBe('employee_not_active')
      expect(body.results[7].problem.code).toBe('external_id_reused')
    })

    it('reports stored externalIds as duplicates with the stored punch', async () => {
      const first = await post({
        employeeCode: 'E001',
        punchType: 'OUT',
        externalId: 'b-stored',
        punchedAt: '2026-11-16T18:00:00+05:30',
      })
      const res = await batch([
        {
          employeeCode: 'E001',
          punchType: 'OUT',
          externalId: 'b-stored',
          punchedAt: '2026-11-16T18:00:00+05:30',
        },
      ])
      expect(res.json().results[0]).toEqual({ index: 0, status: 'duplicate', punch: first.json() })
    })

    it('takes 500 punches and refuses 501', async () => {
      const punches = Array.from({ length: 500 }, (_, i) => ({
        employeeCode: i % 2 ? 'E001' : 'E002',
        punchType: i % 4 < 2 ? 'IN' : 'OUT',
        punchedAt: formatTimestamp(nowMicros() - 10 * DAY + i * 1_000_000),
        externalId: `bulk-${i}`,
      }))
      const res = await batch(punches)
      expect(res.statusCode).toBe(200)
      expect(res.json().summary).toEqual({ received: 500, created: 500, duplicate: 0, rejected: 0 })
      const again = await batch(punches)
      expect(again.json().summary).toEqual({ received: 500, created: 0, duplicate: 500, rejected: 0 })
      const tooMany = await batch([...punches, punches[0]])
      expect(tooMany.statusCode).toBe(400)
      expect(tooMany.json().errors[0].pointer).toBe('#/punches')
    })

    it('stores every printable character as sent, and an absent field as null, not a word', async () => {
      // The characters a database's array or literal syntax gives meaning to, and the words it reads as null.
      const awkward = ['a"b', 'back\\slash', '{braces}', 'comma,separated', 'NULL', 'null', "it's", '(x) [y]']
      const punches = awkward.map((text, i) => ({
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(nowMicros() - 5 * DAY + i * 1_000_000),
        deviceId: text,
        source: `src ${text}`,
        // An externalId has no spaces.
        externalId: `awkward-${text.replaceAll(' ', '')}`,
      }))
      const res = await batch([...punches, { employeeCode: 'E002', punchType: 'OUT' }])
      expect(res.json().summary).toMatchObject({ created: awkward.length + 1, rejected: 0 })
      const results = res.json().results as { punch: { id: string } }[]
      for (const [i, text] of awkward.entries()) {
        const stored = (await get(`${PUNCHES}/${results[i]?.punch.id}`)).json()
        expect(stored).toMatchObject({
          deviceId: text,
          source: `src ${text}`,
          externalId: punches[i]?.externalId,
        })
      }
      const bare = (await get(`${PUNCHES}/${results[awkward.length]?.punch.id}`)).json()
      expect(bare).toMatchObject({ deviceId: null, source: null, externalId: null })
      // Sent again, each is found by its externalId.
      expect((await batch(punches)).json().summary).toMatchObject({ duplicate: awkward.length })
    })

    it('replays a batch under its Idempotency-Key', async () => {
      const punches = [
        { employeeCode: 'E002', punchType: 'IN' },
        { employeeCode: 'E999', punchType: 'IN' },
      ]
      const first = await batch(punches, { 'idempotency-key': 'batch-key' })
      const again = await batch(punches, { 'idempotency-key': 'batch-key' })
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual(first.json())
      const different = await batch([punches[0]], { 'idempotency-key': 'batch-key' })
      expect(different.statusCode).toBe(422)
    })

    it('refuses an empty batch and a body without punches', async () => {
      expect((await batch([])).statusCode).toBe(400)
      const res = await cloud.app.inject({
        method: 'POST',
        url: `${PUNCHES}/batch`,
        headers: bearer(key),
        payload: {},
      })
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ pointer: '#/punches', message: 'is required' }],
      })
    })
  })

  describe('raw punch log', () => {
    let logTenant: string
    let logKey: string

    beforeAll(async () => {
      logTenant = await cloud.createTenant({ timeZone: 'UTC' })
      logKey = await cloud.createApiKey(logTenant, ['attendance:write', 'attendance:read'])
      await cloud.upsertEmployees(logTenant, [employee('A1'), employee('A2')])
      const base = nowMicros() - 5 * DAY
      const punches = Array.from({ length: 30 }, (_, i) => ({
        employeeCode: i % 3 === 0 ? 'A2' : 'A1',
        punchType: i % 2 ? 'OUT' : 'IN',
        // Two punches share each instant, to show the id breaks ties.
        punchedAt: formatTimestamp(base + Math.floor(i / 2) * HOUR),
        externalId: `log-${i}`,
      }))
      const res = await cloud.app.inject({
        method: 'POST',
        url: `${PUNCHES}/batch`,
        headers: bearer(logKey),
        payload: { punches },
      })
      expect(res.json().summary.created).toBe(30)
    })

    const read = async (query: string) =>
      (await cloud.app.inject({ method: 'GET', url: `${PUNCHES}${query}`, headers: bearer(logKey) })).json()

    it('returns every punch once across pages, ordered by punchedAt', async () => {
      const seen: { externalId: string; punchedAt: string }[] = []
      let cursor: string | null = null
      do {
        const page = await read(`?limit=7${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.data)
        cursor = page.nextCursor
      } while (cursor)
      expect(seen).toHaveLength(30)
      expect(new Set(seen.map((p) => p.externalId)).size).toBe(30)
      const times = seen.map((p) => Date.parse(p.punchedAt))
      expect([...times].sort((a, b) => a - b)).toEqual(times)
    })

    it('filters by employeeCode and by [from, to)', async () => {
      const a2 = await read('?employeeCode=A2&limit=200')
      expect(a2.data).toHaveLength(10)
      expect(a2.data.every((p: { employeeCode: string }) => p.employeeCode === 'A2')).toBe(true)
      const all = (await read('?limit=200')).data
      const from = all[4].punchedAt
      const to = all[10].punchedAt
      const window = await read(`?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&limit=200`)
      expect(window.data.map((p: { externalId: string }) => p.externalId)).toEqual(
        all.slice(4, 10).map((p: { externalId: string }) => p.externalId),
      )
    })

    it('404s an unknown punch id', async () => {
      const res = await cloud.app.inject({
        method: 'GET',
        url: `${PUNCHES}/pun_00000000000000000000000000`,
        headers: bearer(logKey),
      })
      expect(res.statusCode).toBe(404)
      expect(res.json().code).toBe('punch_not_found')
    })
  })

  describe('backfill window per tenant', () => {
    it("uses the tenant's own window", async () => {
      const shortTenant = await cloud.createTenant({ backfillDays: 7 })
      const shortKey = await cloud.createApiKey(shortTenant, ['attendance:write'])
      await cloud.upsertEmployees(shortTenant, [employee('S1')])
      const res = await cloud.app.inject({
        method: 'POST',
        url: PUNCHES,
        headers: bearer(shortKey),
        payload: { employeeCode: 'S1', punchType: 'IN', punchedAt: formatTimestamp(nowMicros() - 8 * DAY) },
      })
      expect(res.json().code).toBe('punched_at_too_old')
    })
  })

  describe('an aged-out retry', () => {
    it('is still a duplicate, not too old, once stored', async () => {
      const at = nowMicros() - 80 * DAY
      const body = {
        employeeCode: 'E001',
        punchType: 'IN',
        punchedAt: formatTimestamp(at),
        externalId: 'aged',
      }
      expect((await post(body)).statusCode).toBe(201)
      cloud.fixedNow = nowMicros() + 20 * DAY
      try {
        const res = await post(body)
        expect(res.statusCode).toBe(201)
        expect(res.headers['idempotent-replayed']).toBe('true')
      } finally {
        cloud.fixedNow = undefined
      }
    })
  })
})
