/**
 * Security review (info): request bodies. The docs promise `application/json` and nothing else,
 * but `application/json5` and `application/vnd.api+json` were read as JSON; and a body that names
 * one member twice was taken with the last one winning. RFC 8259 §4: with duplicate names, what a
 * receiver does is unpredictable, so two readers of one body (a proxy or a log and the app) can
 * disagree on what it says. Such a body is refused.
 */
import { beforeAll, expect, it } from 'vitest'
import { describeEachDatabase, employee, type TestCloud } from '../../support/cloud-harness.js'

const PUNCHES = '/api/public/v1/attendance/punches'

describeEachDatabase('request bodies', (cloud: TestCloud) => {
  let key = ''
  beforeAll(async () => {
    const tenant = await cloud.createTenant()
    key = await cloud.createApiKey(tenant)
    await cloud.upsertEmployees(tenant, [employee('J1')])
  })

  const post = (contentType: string, payload: string) =>
    cloud.app.inject({
      method: 'POST',
      url: PUNCHES,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      payload,
    })
  const punch = JSON.stringify({ employeeCode: 'J1', punchType: 'IN' })

  it('security review (info): takes a body only as application/json, with or without a charset', async () => {
    for (const type of ['application/json5', 'application/vnd.api+json', 'application/jsonx', 'text/json']) {
      const answer = await post(type, punch)
      expect(answer.statusCode, type).toBe(415)
      expect(answer.json().code, type).toBe('unsupported_media_type')
    }
    // The token endpoint too, which also takes a form (RFC 6749 §4.4.2).
    for (const type of ['application/json5', 'application/vnd.api+json', 'text/json']) {
      const answer = await cloud.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        headers: { 'content-type': type },
        payload: '{"grant_type":"client_credentials","client_id":"x","client_secret":"y"}',
      })
      expect(answer.statusCode, type).toBe(415)
    }
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
      const answer = await post(type, punch)
      expect(answer.statusCode, answer.body).toBe(201)
    }
  })

  it('security review (info): refuses a body that names a member twice in one object', async () => {
    for (const body of [
      '{"employeeCode":"J1","punchType":"IN","punchType":"OUT"}',
      '{"employeeCode":"J1","punchType":"IN","punch\\u0054ype":"OUT"}',
      '{"employeeCode":"J1","punchType":"IN","deviceId":"g","source":"s","deviceId":"h"}',
    ]) {
      const answer = await post('application/json', body)
      expect(answer.statusCode, body).toBe(400)
      expect(answer.json().code, body).toBe('malformed_json')
      expect(answer.json().detail, body).toMatch(/twice/)
    }
    // The same name in different objects, or as a value, is not a duplicate.
    const fine = await post(
      'application/json',
      '{"employeeCode":"J1","punchType":"OUT","source":"punchType"}',
    )
    expect(fine.statusCode, fine.body).toBe(201)
  })
})
