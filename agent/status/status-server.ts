import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { DeviceCommandError, type DeviceCommandStatus } from '../inputs/device-report.js'
import { DEAD_LETTER_PAGE_MAX, InvalidCursorError } from '../spool/dead-letters.js'
import type { AgentStatus } from './agent-status.js'

export interface StatusServerOptions {
  /** `host:port`; 127.0.0.1 by default, so only this machine can read it. */
  listen: string
  log: Logger
  status: () => AgentStatus
  metrics: Registry
  /** A page of dead letters, oldest first (DeadLetters.list). */
  listDeadLetters: (query: DeadLetterQuery) => Promise<{ data: unknown[]; nextCursor: string | null }>
  /** Replays dead letters (all, or those of one reason or device); answers what moved. */
  replayDeadLetters: (filter: {
    reason?: string
    deviceId?: string
  }) => Promise<{ replayed: number; kept: number }>
  /** Asks a push terminal for its records again (Gateway.backfill). */
  backfill: (deviceId: string, range: { from: string; to: string }) => Promise<DeviceCommandStatus>
}

/** A DeviceCommandError's HTTP status. */
const COMMAND_ERROR_STATUS: Record<DeviceCommandError['code'], number> = {
  device_not_found: 404,
  not_supported: 409,
  invalid_range: 400,
}

/** GET /dead-letters?limit=&cursor=&reason=&deviceId= */
export interface DeadLetterQuery {
  limit?: number
  cursor?: string
  reason?: string
  deviceId?: string
}

export function parseListen(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':')
  return { host: listen.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(at + 1)) }
}

/**
 * The agent's local HTTP listener: GET /status (JSON, what `hajri-agent status` shows), /healthz,
 * /metrics (Prometheus), GET /dead-letters (paged) and POST /dead-letters/replay, so that the CLI
 * works on dead letters through the agent while it runs (one process writes the spool), and
 * POST /devices/:id/backfill (`hajri-agent devices backfill`).
 */
export class StatusServer {
  private app: FastifyInstance | undefined
  address: string | undefined

  constructor(private readonly options: StatusServerOptions) {}

  async start(): Promise<void> {
    const app = Fastify({
      loggerInstance: this.options.log as FastifyBaseLogger,
      logController: new LogController({ disableRequestLogging: true }),
    })
    app.get('/status', async () => this.options.status())
    app.get('/healthz', async (_request, reply) => {
      const status = this.options.status()
      // Alive; the alarms say what needs attention (a full spool is not a reason to restart).
      return reply.send({ status: 'ok', alarms: status.alarms })
    })
    app.get('/metrics', async (_request, reply) =>
      reply.type(this.options.metrics.contentType).send(await this.options.metrics.metrics()),
    )
    // Paged like the cloud's lists (DESIGN.md §2), so that a large pile of dead letters is never
    // read into the agent's memory, or one response, at once.
    app.get<{ Querystring: DeadLetterQuery }>(
      '/dead-letters',
      {
        schema: {
          querystring: {
            type: 'object',
            properties: {
              limit: { type: 'integer', minimum: 1, maximum: DEAD_LETTER_PAGE_MAX },
              cursor: { type: 'string', minLength: 1, maxLength: 64 },
              reason: { type: 'string', minLength: 1 },
              deviceId: { type: 'string', minLength: 1 },
            },
            additionalProperties: false,
          },
        },
      },
      async (request, reply) => {
        try {
          return await this.options.listDeadLetters(request.query)
        } catch (err) {
          if (!(err instanceof InvalidCursorError)) throw err
          return reply.code(400).send({ code: err.code, message: err.message })
        }
      },
    )
    app.post<{ Body: { reason?: string; deviceId?: string } | undefined }>(
      '/dead-letters/replay',
      async (request) => {
        const body = request.body ?? {}
        return this.options.replayDeadLetters({
          ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
          ...(typeof body.deviceId === 'string' ? { deviceId: body.deviceId } : {}),
        })
      },
    )
    // JSON only (Fastify refuses other bodies with 415), so a web page cannot post it as a "simple"
    // cross-origin form. The answer is 202: the terminal takes the command at its next poll.
    app.post<{ Params: { deviceId: string }; Body: { from: string; to: string } }>(
      '/devices/:deviceId/backfill',
      {
        schema: {
          params: {
            type: 'object',
            properties: { deviceId: { type: 'string', minLength: 1, maxLength: 64 } },
          },
          body: {
            type: 'object',
            properties: {
              from: { type: 'string', minLength: 1, maxLength: 64 },
              to: { type: 'string', minLength: 1, maxLength: 64 },
            },
            required: ['from', 'to'],
            additionalProperties: false,
          },
        },
      },
      async (request, reply) => {
        try {
          const command = await this.options.backfill(request.params.deviceId, request.body)
          return reply.code(202).send({ command })
        } catch (err) {
          if (!(err instanceof DeviceCommandError)) throw err
          return reply.code(COMMAND_ERROR_STATUS[err.code]).send({ code: err.code, message: err.message })
        }
      },
    )
    const { host, port } = parseListen(this.options.listen)
    this.address = await app.listen({ host, port })
    this.app = app
  }

  async stop(): Promise<void> {
    await this.app?.close()
    this.app = undefined
  }
}
