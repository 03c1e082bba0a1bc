import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { AgentStatus } from './agent-status.js'

export interface StatusServerOptions {
  /** `host:port`; 127.0.0.1 by default, so only this machine can read it. */
  listen: string
  log: Logger
  status: () => AgentStatus
  metrics: Registry
  /** Every dead letter, oldest first. */
  listDeadLetters: () => Promise<unknown[]>
  /** Replays dead letters (all, or those of one reason or device); answers what moved. */
  replayDeadLetters: (filter: {
    reason?: string
    deviceId?: string
  }) => Promise<{ replayed: number; kept: number }>
}

export function parseListen(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':')
  return { host: listen.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(at + 1)) }
}

/**
 * The agent's local HTTP listener: GET /status (JSON, what `hajri-agent status` shows), /healthz,
 * /metrics (Prometheus), and GET /dead-letters and POST /dead-letters/replay, so that the CLI
 * works on dead letters through the agent while it runs (one process writes the spool).
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
    app.get('/dead-letters', async () => this.options.listDeadLetters())
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
    const { host, port } = parseListen(this.options.listen)
    this.address = await app.listen({ host, port })
    this.app = app
  }

  async stop(): Promise<void> {
    await this.app?.close()
    this.app = undefined
  }
}
