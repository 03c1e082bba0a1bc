/**
 * OWASP API4:2023, slow clients: a client that sends its headers or its body a little at
 * a time (slowloris, "slow POST"), or connects and sends nothing, or keeps an idle keep-alive
 * connection, is cut off by the server's timeouts (cloud/settings/server-timeouts.ts), here set to
 * fractions of a second. Nothing is timed: each scenario waits, with a generous deadline, for the
 * server to close the connection.
 */
import { connect, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { loadCloudConfig } from '../../../cloud/config.js'
import { ConfigError } from '../../../cloud/settings/config-error.js'
import { DEFAULT_SERVER_TIMEOUTS, serverTimeoutOptions } from '../../../cloud/settings/server-timeouts.js'
import { TestCloud } from '../../support/cloud-harness.js'

/** Bounds the wait for the server to act; never a measure of how fast it did. */
const DEADLINE_MS = 20_000

interface Conversation {
  socket: Socket
  /** Everything the server wrote. */
  received: () => string
  /** Resolves when the server has closed the connection; rejects after the deadline. */
  closed: Promise<void>
  /** Writes `chunk` every `everyMs` until the connection closes (the slow client). */
  trickle(chunk: string, everyMs: number): void
}

function open(port: number): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    let text = ''
    let timer: NodeJS.Timeout | undefined
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
    })
    socket.on('error', () => {}) // a reset is a close too
    const closed = new Promise<void>((done, fail) => {
      const deadline = setTimeout(
        () => fail(new Error(`the server did not close the connection in ${DEADLINE_MS} ms`)),
        DEADLINE_MS,
      )
      socket.on('close', () => {
        clearTimeout(deadline)
        clearInterval(timer)
        done()
      })
    })
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        closed,
        trickle: (chunk, everyMs) => {
          timer = setInterval(() => {
            if (!socket.destroyed && socket.writable) socket.write(chunk)
          }, everyMs)
        },
      }),
    )
    socket.once('error', reject)
  })
}

describe('OWASP API4: slow clients are cut off', () => {
  const cloud = new TestCloud('sqlite')
  let app: FastifyInstance
  let port: number
  const sockets: Socket[] = []

  beforeAll(async () => {
    await cloud.start()
    app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
      serverTimeouts: { headersMs: 500, requestMs: 1000, idleMs: 1500, keepAliveMs: 300 },
    })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    port = typeof address === 'object' && address ? address.port : 0
  })
  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await app?.close()
    await cloud.stop()
  })

  const conversation = async () => {
    const c = await open(port)
    sockets.push(c.socket)
    return c
  }

  it('serves a client that sends its request at once', async () => {
    const c = await conversation()
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: hajri.test\r\nConnection: close\r\n\r\n')
    await c.closed
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
  })

  // The server writes a 408 before it closes; the test does not insist on reading it, since a close
  // with unread bytes from the client may reset the connection before the 408 arrives.
  it('cuts off a client that sends its headers a line at a time (slowloris)', async () => {
    const c = await conversation()
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: hajri.test\r\n')
    c.trickle('X-Slow: 1\r\n', 100)
    await c.closed
    expect(c.received()).not.toMatch(/^HTTP\/1\.1 2/)
  })

  it('cuts off a client that sends its body a byte at a time (slow POST)', async () => {
    const c = await conversation()
    c.socket.write(
      'POST /api/console/v1/session HTTP/1.1\r\nHost: hajri.test\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"email":"',
    )
    c.trickle('a', 100)
    await c.closed
    expect(c.received()).not.toMatch(/^HTTP\/1\.1 2/)
  })

  it('closes a connection that never sends anything', async () => {
    const c = await conversation()
    await c.closed
    expect(c.received()).not.toMatch(/200/)
  })

  it('closes an idle keep-alive connection after its answer', async () => {
    const c = await conversation()
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: hajri.test\r\n\r\n')
    await c.closed
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(c.received()).toMatch(/keep-alive/i)
  })
})

describe('the slow-client settings', () => {
  it('default to 15 s for the headers, 60 s for the request, 120 s idle and 72 s keep-alive', () => {
    expect(DEFAULT_SERVER_TIMEOUTS).toEqual({
      headersMs: 15_000,
      requestMs: 60_000,
      idleMs: 120_000,
      keepAliveMs: 72_000,
    })
    const options = serverTimeoutOptions(DEFAULT_SERVER_TIMEOUTS)
    expect(options).toMatchObject({
      connectionTimeout: 120_000,
      keepAliveTimeout: 72_000,
      requestTimeout: 60_000,
    })
    expect(options.http).toMatchObject({
      headersTimeout: 15_000,
      requestTimeout: 60_000,
      connectionsCheckingInterval: 3_750,
    })
  })

  it('are read from HAJRI_*_TIMEOUT_SECONDS, and wrong values are reported', () => {
    const config = loadCloudConfig({
      HAJRI_HEADERS_TIMEOUT_SECONDS: '10',
      HAJRI_REQUEST_TIMEOUT_SECONDS: '300',
      HAJRI_IDLE_TIMEOUT_SECONDS: '600',
      HAJRI_KEEP_ALIVE_TIMEOUT_SECONDS: '5',
    })
    expect(config).toMatchObject({
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 300,
      idleTimeoutSeconds: 600,
      keepAliveTimeoutSeconds: 5,
    })
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadCloudConfig(env)
        return []
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError)
        return (err as ConfigError).problems
      }
    }
    expect(problems({ HAJRI_REQUEST_TIMEOUT_SECONDS: '0' })).toEqual([
      'HAJRI_REQUEST_TIMEOUT_SECONDS: must be a whole number of seconds from 1 to 3600, got "0"',
    ])
    expect(problems({ HAJRI_IDLE_TIMEOUT_SECONDS: '1.5' })).toHaveLength(1)
    expect(problems({ HAJRI_HEADERS_TIMEOUT_SECONDS: '90' })).toEqual([
      'HAJRI_HEADERS_TIMEOUT_SECONDS (90) must not be longer than HAJRI_REQUEST_TIMEOUT_SECONDS (60): the headers are part of the request',
    ])
  })
})
