import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../../cloud/app.js'
import { type DatabaseHandle, openDatabase } from '../../../../cloud/db/database.js'
import { createTestDatabaseUrl, describeEachDatabase } from '../../../support/cloud-harness.js'

describeEachDatabase('health endpoints', (cloud) => {
  it('GET /healthz answers 200 ok without a credential', async () => {
    const res = await cloud.app.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ok' })
    expect(res.headers['x-request-id']).toEqual(expect.any(String))
  })

  it('GET /readyz answers 200 ok while the database answers', async () => {
    const res = await cloud.app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ok' })
  })
})

/** An app over a database the test can take away, as a load balancer would see it. */
async function appOver(database: DatabaseHandle): Promise<FastifyInstance> {
  const app = await buildApp({
    config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
    database,
    logger: false,
    closeDatabase: false,
  })
  await app.ready()
  return app
}

function expectUnavailable(res: Awaited<ReturnType<FastifyInstance['inject']>>): void {
  expect(res.statusCode).toBe(503)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  const problem = res.json()
  expect(problem).toMatchObject({
    type: 'urn:hajri:problem:service_unavailable',
    status: 503,
    code: 'service_unavailable',
    instance: `urn:hajri:request:${res.headers['x-request-id']}`,
  })
  // The balancer learns the database is down, not how or where.
  expect(res.body).not.toMatch(/sqlite|postgres|127\.0\.0\.1|ECONNREFUSED|destroy/i)
}

describe('readiness without a database', () => {
  describe('when the database handle is closed', () => {
    let app: FastifyInstance
    let drop: () => Promise<void>

    beforeAll(async () => {
      const target = await createTestDatabaseUrl('sqlite')
      drop = target.drop
      const database = openDatabase(target.url)
      app = await appOver(database)
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
      await database.close()
    })
    afterAll(async () => {
      await app.close()
      await drop()
    })

    it('GET /readyz answers 503 service_unavailable', async () => {
      expectUnavailable(await app.inject({ method: 'GET', url: '/readyz' }))
    })

    it('GET /healthz still answers 200: the process itself is alive', async () => {
      const res = await app.inject({ method: 'GET', url: '/healthz' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ status: 'ok' })
    })
  })

  // Nothing listens on port 1: every connection attempt is refused, as when PostgreSQL is down.
  describe('when the PostgreSQL server cannot be reached', () => {
    let app: FastifyInstance
    let database: DatabaseHandle

    beforeAll(async () => {
      database = openDatabase('postgres://postgres@127.0.0.1:1/hajri', { poolSize: 1 })
      app = await appOver(database)
    })
    afterAll(async () => {
      await app.close()
      await database.close()
    })

    it('GET /readyz answers 503 service_unavailable', async () => {
      expectUnavailable(await app.inject({ method: 'GET', url: '/readyz' }))
    })

    it('GET /healthz still answers 200', async () => {
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    })
  })
})
