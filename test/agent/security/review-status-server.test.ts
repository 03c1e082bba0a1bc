/**
 * The agent's local status listener against what a web page on the gate PC can do: post to it
 * (cross-origin "simple" requests need no preflight), and read it through a name it rebinds to
 * 127.0.0.1 (DNS rebinding). A real StatusServer on a real socket, driven with node:http so that
 * the Host and Origin headers are exactly what a browser would send.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { StatusServer } from '../../../agent/status/status-server.js'
import { runAgent } from '../commands/run-agent.js'
import { ConfigDir, minimalDoc } from '../config/config-fixture.js'

const log = pino({ level: 'silent' })

interface Answer {
  status: number
  type: string | undefined
  body: string
}

/** One request with exactly these headers (fetch would not let a test choose Host). */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers, setHost: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: text }),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function startListener(listen = '127.0.0.1:0') {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-review-status-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const tokenFile = join(dir, 'spool', 'control-token')
  const replays: object[] = []
  const secretStatus = {
    agent: { site: 'pune' },
    devices: [{ id: 'gate-1', lastPunch: { employeeCode: 'E042' } }],
  }
  const server = new StatusServer({
    listen,
    tokenFile,
    log,
    status: () => secretStatus as unknown as AgentStatus,
    metrics: new Registry(),
    listDeadLetters: async () => ({
      data: [{ id: 'dlt_1', punch: { employeeCode: 'E042' } }],
      nextCursor: null,
    }),
    replayDeadLetters: async (filter) => {
      replays.push(filter)
      return { replayed: 1, kept: 0 }
    },
    backfill: async () => {
      throw new Error('not asked')
    },
    setTime: async () => {
      throw new Error('not asked')
    },
    clearLog: async () => {
      throw new Error('not asked')
    },
  })
  await server.start()
  cleanups.push(() => server.stop())
  const base = server.address ?? ''
  const host = new URL(base).host
  return { server, base, host, tokenFile, replays, dir }
}

describe('the status listener and web pages', () => {
  it('security review #3: refuses any request that carries an Origin header (403 problem), a text/plain replay included', async () => {
    const { base, host, replays } = await startListener()
    // What <form enctype="text/plain"> or fetch(..., {mode: 'no-cors'}) sends: no preflight.
    const posted = await send(
      base,
      'POST',
      '/dead-letters/replay',
      { host, origin: 'https://evil.example', 'content-type': 'text/plain' },
      '{"reason":"rejected_by_cloud"}',
    )
    expect(posted.status).toBe(403)
    expect(posted.type).toMatch(/^application\/problem\+json/)
    expect(JSON.parse(posted.body)).toMatchObject({ status: 403, code: 'origin_refused' })
    expect(replays).toEqual([])
    // Reads too: a page that got an answer through some other door still reads nothing.
    for (const path of ['/status', '/dead-letters']) {
      const read = await send(base, 'GET', path, { host, origin: 'http://localhost:8080' })
      expect(read.status, path).toBe(403)
      expect(read.body).not.toContain('E042')
    }
  })

  it('security review #3: answers only loopback Host names or the configured listen host, so DNS rebinding reads nothing', async () => {
    const { base, host } = await startListener()
    const port = new URL(base).port
    // A rebinding page's requests carry its own name, with the port it was served on.
    for (const foreign of [`rebind.evil.example:${port}`, 'rebind.evil.example', `10.0.0.7:${port}`]) {
      for (const path of ['/status', '/dead-letters', '/metrics']) {
        const answer = await send(base, 'GET', path, { host: foreign })
        expect(answer.status, `${foreign}${path}`).toBe(421)
        expect(answer.body).not.toContain('E042')
        expect(JSON.parse(answer.body)).toMatchObject({ code: 'host_not_allowed' })
      }
    }
    // This machine's tools: the CLI, curl, Prometheus on localhost.
    for (const own of [host, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      const answer = await send(base, 'GET', '/status', { host: own })
      expect(answer.status, own).toBe(200)
      expect(answer.body).toContain('E042')
    }
  })

  it('security review #3: a change needs the control token kept beside the spool (mode 0600) and a JSON body', async () => {
    const { base, host, tokenFile, replays } = await startListener()
    const json = { host, 'content-type': 'application/json' }
    const replay = (headers: Record<string, string>, body = '{}') =>
      send(base, 'POST', '/dead-letters/replay', headers, body)

    // Without the token, or with a wrong one: 401, nothing replayed.
    const anonymous = await replay(json)
    expect(anonymous.status).toBe(401)
    expect(JSON.parse(anonymous.body)).toMatchObject({ code: 'authentication_required' })
    expect((await replay({ ...json, authorization: 'Bearer not-the-token' })).status).toBe(401)
    expect(replays).toEqual([])

    // The token: in the file, readable by the agent's user only.
    const info = await stat(tokenFile)
    if (process.platform !== 'win32') expect(info.mode & 0o777).toBe(0o600)
    const token = (await readFile(tokenFile, 'utf8')).trim()
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const bearer = { authorization: `Bearer ${token}` }

    // With the token, a body that is not JSON is still refused: no HTML form can send JSON.
    const plain = await replay({ host, ...bearer, 'content-type': 'text/plain' }, '{}')
    expect(plain.status).toBe(415)
    expect(replays).toEqual([])

    const done = await replay({ ...json, ...bearer }, '{"deviceId":"gate-1"}')
    expect(done.status).toBe(200)
    expect(replays).toEqual([{ deviceId: 'gate-1' }])
  })

  it('security review #3: keeps its token across restarts, and replaces a token file others could read', async () => {
    const first = await startListener()
    const token = (await readFile(first.tokenFile, 'utf8')).trim()
    await first.server.stop()
    await first.server.start()
    expect((await readFile(first.tokenFile, 'utf8')).trim()).toBe(token)
    if (process.platform === 'win32') return
    await first.server.stop()
    await chmod(first.tokenFile, 0o644)
    await first.server.start()
    const replaced = (await readFile(first.tokenFile, 'utf8')).trim()
    expect(replaced).not.toBe(token)
    expect((await stat(first.tokenFile)).mode & 0o777).toBe(0o600)
    // Something that is not a token is replaced too.
    await first.server.stop()
    await writeFile(first.tokenFile, 'guessable\n', { mode: 0o600 })
    await first.server.start()
    expect((await readFile(first.tokenFile, 'utf8')).trim()).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })
})

describe('check-config and a listener beyond loopback', () => {
  it('security review #3: warns when status.listen is reachable from the network, and not for loopback', async () => {
    const files = await ConfigDir.create()
    cleanups.push(() => files.remove())
    const check = async (listen: string) => {
      const doc = minimalDoc()
      doc.status = { listen }
      const file = await files.writeConfig(doc)
      return runAgent(files.dir, {}, 'check-config', '--config', file)
    }
    for (const listen of ['0.0.0.0:9410', '[::]:9410', '192.168.1.20:9410']) {
      const result = await check(listen)
      expect(result.code, listen).toBe(0)
      expect(result.stderr, listen).toMatch(/^warning: status\.listen: listens beyond this machine/m)
    }
    for (const listen of ['127.0.0.1:9410', '[::1]:9410', 'localhost:9410']) {
      expect((await check(listen)).stderr, listen).toBe('')
    }
  })
})
