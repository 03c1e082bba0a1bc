import { createHash, timingSafeEqual } from 'node:crypto'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { PROBLEM_CATALOG, PROBLEM_CONTENT_TYPE, type ProblemCode, problemType } from '../../shared/problem.js'
import { agentVersion } from '../agent-version.js'
import {
  type DeviceClockResult,
  DeviceCommandError,
  type DeviceCommandStatus,
} from '../inputs/device-report.js'
import { DEAD_LETTER_PAGE_MAX, InvalidCursorError } from '../spool/dead-letters.js'
import type { AgentStatus } from './agent-status.js'
import { ensureControlToken } from './control-token.js'

interface StatusServerOptions {
  /** `host:port`; 127.0.0.1 by default, so only this machine can read it. */
  listen: string
  /**
   * Where the control token is kept (control-token.ts: created at start when absent, mode 0600):
   * in the spool directory (config/control-token-file.ts), where the CLI finds it. Changes need
   * the token; reads do not.
   */
  tokenFile: string
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
  /** Sets a ZK terminal's clock from the agent's (Gateway.setTime). */
  setTime: (deviceId: string) => Promise<DeviceClockResult>
  /** Clears a ZK terminal's log once all of it is in the cloud (Gateway.clearLog). */
  clearLog: (deviceId: string, options: { acceptDeadLetters: boolean }) => Promise<{ cleared: number }>
}

/** A DeviceCommandError's HTTP status. */
const COMMAND_ERROR_STATUS: Record<DeviceCommandError['code'], number> = {
  device_not_found: 404,
  not_supported: 409,
  invalid_range: 400,
  device_unreachable: 503,
  not_safe: 409,
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

/** The names this machine's own tools reach the listener by; the configured host is added to them. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1']
/** "Every interface" is where the listener is bound, never a name a client asks for. */
const UNSPECIFIED = new Set(['0.0.0.0', '::', '::0'])

/** The host of a Host header (RFC 9110 §7.2: uri-host [":" port]), lower case, brackets removed. */
function hostOfHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(header)
  return m ? (m[1] ?? m[2] ?? '').toLowerCase() : undefined
}

/** The Host names the listener answers: loopback ones, and the host it was told to listen on. */
function allowedHostNames(listen: string): ReadonlySet<string> {
  const host = parseListen(listen).host.toLowerCase()
  return new Set([...LOOPBACK_NAMES, ...(UNSPECIFIED.has(host) ? [] : [host])])
}

const sha256 = (text: string) => createHash('sha256').update(text).digest()

/** Distinct refusals logged at most (what a page sends is not allowed to grow the log, or memory). */
const MAX_REFUSALS_LOGGED = 64

type Refusal = { code: ProblemCode; detail: string; headers?: Record<string, string> }

/** An RFC 9457 problem (§3.1 members, with Hajri's stable code), at the catalog's status. */
function refuse(reply: FastifyReply, refusal: Refusal): FastifyReply {
  const { status, title } = PROBLEM_CATALOG[refusal.code]
  if (refusal.headers) reply.headers(refusal.headers)
  return reply
    .code(status)
    .type(PROBLEM_CONTENT_TYPE)
    .send({ type: problemType(refusal.code), title, status, detail: refusal.detail, code: refusal.code })
}

/**
 * The agent's local HTTP listener: GET /status (JSON, what `hajri-agent status` shows), /healthz,
 * /metrics (Prometheus), GET /dead-letters (paged) and POST /dead-letters/replay, so that the CLI
 * works on dead letters through the agent while it runs (one process writes the spool), and
 * POST /devices/:id/backfill, /devices/:id/set-time and /devices/:id/clear-log (`hajri-agent
 * devices ...`).
 *
 * Protection: a web page open on this machine can send requests to 127.0.0.1, and a page
 * on a name it rebinds to 127.0.0.1 (DNS rebinding) can read the answers. So, for every request:
 * - one with an Origin header is refused (403): browsers send Origin on every cross-origin request
 *   and every POST (Fetch standard, "append a request `Origin` header"); this machine's tools
 *   (the CLI, curl, Prometheus) send none;
 * - one whose Host is not a loopback name (localhost, 127.0.0.1, [::1], any port) or the configured
 *   listen host is refused (421, RFC 9110 §15.5.20): a rebinding page's requests carry its own
 *   name. An IP in the URL is fine for a tool reaching a listener configured on that IP.
 * Changes (the POSTs) also need the control token (Authorization: Bearer, RFC 6750 §2.1): a
 * random value kept in `tokenFile`, mode 0600, so only the agent's user (and
 * root) can read it; and a JSON body (application/json, else 415), which no HTML form can send.
 * Reads need no token, so that monitoring keeps working with nothing to configure.
 */
export class StatusServer {
  private app: FastifyInstance | undefined
  private token: Buffer | undefined
  private readonly refusalsLogged = new Set<string>()
  address: string | undefined

  constructor(private readonly options: StatusServerOptions) {}

  /** Why a request may not be served at all, or undefined. */
  private foreignRequest(request: FastifyRequest, hosts: ReadonlySet<string>): Refusal | undefined {
    if (request.headers.origin !== undefined) {
      return {
        code: 'origin_refused',
        detail:
          'requests from web pages (with an Origin header) are refused: this listener is for tools on this machine',
      }
    }
    const host = hostOfHeader(request.headers.host)
    if (host === undefined || !hosts.has(host)) {
      return {
        code: 'host_not_allowed',
        detail: 'Host must be localhost, 127.0.0.1, [::1] or the host of status.listen',
      }
    }
    return undefined
  }

  /** Each Origin or Host refused is logged once (a page can send thousands), up to a bound. */
  private logRefusal(request: FastifyRequest, refusal: Refusal): void {
    const key = `${refusal.code} ${request.headers.origin ?? ''} ${request.headers.host ?? ''}`
    if (this.refusalsLogged.has(key) || this.refusalsLogged.size >= MAX_REFUSALS_LOGGED) return
    this.refusalsLogged.add(key)
    this.options.log.warn(
      {
        code: refusal.code,
        method: request.method,
        url: request.url,
        origin: request.headers.origin,
        host: request.headers.host,
      },
      'status listener: request refused for its Origin or Host (logged once per origin and host)',
    )
  }

  /** Why a change may not be made, or undefined: the token first, then a JSON body. */
  private unauthorizedChange(request: FastifyRequest): Refusal | undefined {
    // RFC 6750 §2.1 b64token; the scheme name is case-insensitive (RFC 9110 §11.1).
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(request.headers.authorization ?? '')
    const expected = this.token
    if (!match?.[1] || !expected || !timingSafeEqual(sha256(match[1]), expected)) {
      return {
        code: 'authentication_required',
        detail: `changes need the agent's control token (Authorization: Bearer), which it keeps in ${this.options.tokenFile}`,
        // RFC 6750 §3: a 401 says which scheme it wants.
        headers: { 'www-authenticate': 'Bearer realm="hajri-agent"' },
      }
    }
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/json') {
      return {
        code: 'unsupported_media_type',
        detail: 'changes take a JSON body (Content-Type: application/json)',
      }
    }
    return undefined
  }

  async start(): Promise<void> {
    const app = Fastify({
      loggerInstance: this.options.log as FastifyBaseLogger,
      logController: new LogController({ disableRequestLogging: true }),
    })
    // Only JSON bodies: Fastify also parses text/plain by default, which a page can send anywhere.
    app.removeContentTypeParser('text/plain')
    const hosts = allowedHostNames(this.options.listen)
    app.addHook('onRequest', async (request, reply) => {
      const refusal = this.foreignRequest(request, hosts)
      if (refusal) {
        this.logRefusal(request, refusal)
        return refuse(reply, refusal)
      }
    })
    // Before the body is read: a caller without the token cannot make the agent parse anything.
    const change = async (request: FastifyRequest, reply: FastifyReply) => {
      const refusal = this.unauthorizedChange(request)
      if (refusal) return refuse(reply, refusal)
    }
    this.token = sha256(await ensureControlToken(this.options.tokenFile))
    // The version is the running code's own, whoever builds the rest of the status.
    app.get('/status', async () => {
      const status = this.options.status()
      return { ...status, agent: { ...status.agent, version: agentVersion() } }
    })
    app.get('/healthz', async (_request, reply) => {
      const status = this.options.status()
      // Alive; the alarms say what needs attention (a full spool is not a reason to restart).
      return reply.send({ status: 'ok', alarms: status.alarms })
    })
    app.get('/metrics', async (_request, reply) =>
      reply.type(this.options.metrics.contentType).send(await this.options.metrics.metrics()),
    )
    // Paged like the cloud's lists (docs/development/architecture.md#paging), so that a large pile of dead
    // letters is never read into the agent's memory, or one response, at once.
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
    app.post<{ Body: { reason?: string; deviceId?: string } }>(
      '/dead-letters/replay',
      { onRequest: change, schema: { body: { type: 'object' } } },
      async (request) => {
        const body = request.body
        return this.options.replayDeadLetters({
          ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
          ...(typeof body.deviceId === 'string' ? { deviceId: body.deviceId } : {}),
        })
      },
    )
    // The answer is 202: the terminal takes the command at its next poll.
    app.post<{ Params: { deviceId: string }; Body: { from: string; to: string } }>(
      '/devices/:deviceId/backfill',
      {
        onRequest: change,
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
    const deviceParams = {
      type: 'object',
      properties: { deviceId: { type: 'string', minLength: 1, maxLength: 64 } },
    }
    const deviceCommand = <T>(
      path: string,
      body: object,
      run: (deviceId: string, body: Record<string, unknown>) => Promise<T>,
    ) =>
      app.post<{ Params: { deviceId: string }; Body: Record<string, unknown> }>(
        path,
        { onRequest: change, schema: { params: deviceParams, body } },
        async (request, reply) => {
          try {
            return await run(request.params.deviceId, request.body)
          } catch (err) {
            if (!(err instanceof DeviceCommandError)) throw err
            return reply.code(COMMAND_ERROR_STATUS[err.code]).send({ code: err.code, message: err.message })
          }
        },
      )
    deviceCommand('/devices/:deviceId/set-time', { type: 'object', additionalProperties: false }, (id) =>
      this.options.setTime(id),
    )
    deviceCommand(
      '/devices/:deviceId/clear-log',
      {
        type: 'object',
        properties: { acceptDeadLetters: { type: 'boolean' } },
        additionalProperties: false,
      },
      (id, body) => this.options.clearLog(id, { acceptDeadLetters: body.acceptDeadLetters === true }),
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
