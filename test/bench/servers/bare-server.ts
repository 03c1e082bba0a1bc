import Fastify from 'fastify'
import { serveInChild } from './serve-in-child.js'

/**
 * The baseline of the punch endpoint benchmark: Fastify with its defaults and one POST route that
 * parses a JSON body of the punch's shape and answers 201 with a small JSON object. What the punch
 * endpoint costs beyond it is Hajri's own work (auth, validation, SQLite, serialisation).
 */
await serveInChild(async () => {
  const app = Fastify({ logger: false })
  let n = 0
  app.post('/api/public/v1/attendance/punches', async (request, reply) => {
    const body = request.body as { employeeCode?: unknown; externalId?: unknown }
    n++
    return reply
      .code(201)
      .send({ id: `pun_${n}`, employeeCode: body.employeeCode, externalId: body.externalId })
  })
  return app
})
