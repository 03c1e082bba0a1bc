import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { loggerOptions } from '../../../cloud/logger-options.js'
import { bearer, employee, TestCloud } from '../../support/cloud-harness.js'
import { LogLines } from '../../support/log-lines.js'

describe('the access log', () => {
  const cloud = new TestCloud('sqlite')
  const lines = new LogLines()
  let app: FastifyInstance
  let tenantId: string
  let key: string

  beforeAll(async () => {
    await cloud.start()
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    key = await cloud.createApiKey(tenantId)
    app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'info' },
      database: cloud.database,
      logger: pino(loggerOptions('info'), lines),
      closeDatabase: false,
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await cloud.stop()
  })

  const linesOf = (requestId: unknown) => lines.all.filter((l) => l.requestId === requestId)

  it('writes one line a request, when it completes, with the request, its status, its time and its tenant', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/public/v1/attendance/punches',
      headers: bearer(key),
      payload: { employeeCode: 'E001', punchType: 'IN' },
    })
    expect(res.statusCode, res.body).toBe(201)
    const logged = linesOf(res.headers['x-request-id'])
    expect(logged).toHaveLength(1)
    expect(logged[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'POST', url: '/api/public/v1/attendance/punches' },
      res: { statusCode: 201 },
      tenantId,
    })
    expect(typeof logged[0]?.responseTime).toBe('number')
    expect(JSON.stringify(logged[0])).not.toContain(key)
  })

  it('logs a refused request the same way, with secret URL parameters censored', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/public/v1/employees?access_token=hjk_leaked' })
    expect(res.statusCode).toBe(401)
    const logged = linesOf(res.headers['x-request-id'])
    expect(logged.map((l) => l.msg)).toEqual(['request completed'])
    expect(logged[0]).toMatchObject({
      req: { method: 'GET', url: '/api/public/v1/employees?access_token=[redacted]' },
      res: { statusCode: 401 },
    })
    expect(lines.all.some((l) => l.msg === 'incoming request')).toBe(false)
  })
})
