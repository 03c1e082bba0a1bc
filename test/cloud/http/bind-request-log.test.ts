import Fastify from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bindRequestLog } from '../../../cloud/http/bind-request-log.js'
import { LogLines } from '../../support/log-lines.js'

describe('bindRequestLog', () => {
  const lines = new LogLines()
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, lines) })

  beforeAll(async () => {
    app.addHook('onRequest', async (request) => {
      const tenant = request.headers['x-tenant']
      if (typeof tenant === 'string') request.log = bindRequestLog(request.log, { tenantId: tenant })
    })
    app.get('/work', async (request) => {
      // The second request binds its tenant while the first one is still waiting here.
      await new Promise((resolve) => setTimeout(resolve, 20))
      request.log.info('working')
      return {}
    })
    await app.ready()
  })
  afterAll(() => app.close())

  it('binds each request its own tenant, also on the completion line, and leaves the server logger alone', async () => {
    const answers = await Promise.all([
      app.inject({ url: '/work', headers: { 'x-tenant': 'ten_a' } }),
      app.inject({ url: '/work', headers: { 'x-tenant': 'ten_b' } }),
      app.inject({ url: '/work' }),
    ])
    const working = lines.all.filter((l) => l.msg === 'working')
    expect(working.map((l) => l.tenantId).sort()).toEqual(['ten_a', 'ten_b', undefined].sort())
    const completed = lines.all.filter((l) => l.msg === 'request completed')
    expect(completed).toHaveLength(3)
    // Each line's tenant is the one its own request bound: pair them by request id.
    for (const line of completed) {
      const work = working.find((w) => w.reqId === line.reqId)
      expect(work, JSON.stringify(line)).toBeDefined()
      expect(line.tenantId).toBe(work?.tenantId)
    }
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200])
    app.log.info('after')
    expect(lines.all.find((l) => l.msg === 'after')).not.toHaveProperty('tenantId')
  })

  it('gives a child logger where the logger has no setBindings (logging off)', () => {
    const quiet = Fastify({ logger: false })
    const bound = bindRequestLog(quiet.log, { tenantId: 'ten_a' })
    expect(typeof bound.info).toBe('function')
  })
})
