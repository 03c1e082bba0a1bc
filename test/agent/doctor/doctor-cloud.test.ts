/**
 * `hajri-agent doctor`'s cloud and clock checks against a real cloud listening on a port (its
 * OAuth token endpoint, asked exactly as the agent asks it), and against a real HTTP server whose
 * Date header is set off by a chosen amount.
 */
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_FUTURE_SKEW_SECONDS } from '../../../shared/punch.js'
import { TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { makeTestCertificates, opensslSkipReason } from '../inputs/mqtt-test-certificates.js'
import { checkOf, doctor, doctorDir, humanLines, writeConfig } from './doctor-kit.js'

describe('doctor against the real cloud', () => {
  const cloud = new TestCloud('sqlite')
  let url: string
  let clientId: string
  let clientSecret: string
  let dir: Awaited<ReturnType<typeof doctorDir>>

  beforeAll(async () => {
    await cloud.start()
    url = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
    const tenantId = await cloud.createTenant()
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'site agent', scopes: ['attendance:write'] },
      TEST_ACTOR,
    )
    clientId = app.clientId
    clientSecret = app.clientSecret
    dir = await doctorDir()
  })
  afterAll(async () => {
    await dir.remove()
    await cloud.stop()
  })

  it('passes the cloud, credentials and clock with the OAuth app, and exits 0 when nothing failed', async () => {
    await writeConfig(dir.dir, { cloud: { url, clientId, clientSecret } })
    const human = await doctor(dir.dir)
    expect(human.code, human.stdout).toBe(0)
    expect(humanLines(human.stdout, 'cloud credentials')[0]).toMatch(/^PASS .*issued an access token/)
    expect(humanLines(human.stdout, 'clock')[0]).toMatch(
      /^PASS .*agrees with the cloud|^PASS .*s (ahead of|behind) the cloud/,
    )
    expect(human.stdout).not.toContain(clientSecret)
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(0)
    expect(json.json()).toMatchObject({ ok: true, counts: { fail: 0 } })
    expect(checkOf(json, 'cloud address').status).toBe('pass')
    expect(checkOf(json, 'cloud connection')).toMatchObject({ status: 'pass', subject: url })
    expect(checkOf(json, 'cloud credentials').status).toBe('pass')
    expect(checkOf(json, 'clock').status).toBe('pass')
    expect(json.stdout).not.toContain(clientSecret)
  })

  it('fails the credentials check for a wrong secret, with advice, without printing the secret', async () => {
    const wrong = `${clientSecret}x`
    await writeConfig(dir.dir, { cloud: { url, clientId, clientSecret: wrong } })
    const human = await doctor(dir.dir)
    expect(human.code).toBe(1)
    const [line, advice] = humanLines(human.stdout, 'cloud credentials')
    expect(line).toMatch(/^FAIL .*invalid_client/)
    expect(advice).toMatch(/^ {6}-> check cloud.clientId and cloud.clientSecret/)
    expect(human.stdout).not.toContain(wrong)
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(1)
    expect(json.json()).toMatchObject({ ok: false })
    expect(checkOf(json, 'cloud credentials')).toMatchObject({ status: 'fail', advice: expect.any(String) })
    // The refusal came with the cloud's Date: the clock is still checked.
    expect(checkOf(json, 'clock').status).toBe('pass')
    expect(json.stdout).not.toContain(wrong)
  })

  it('fails the connection and skips what needs it when nothing listens at cloud.url', async () => {
    await writeConfig(dir.dir)
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(1)
    expect(checkOf(json, 'cloud connection')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('ECONNREFUSED'),
    })
    expect(checkOf(json, 'cloud credentials').status).toBe('skip')
    expect(checkOf(json, 'clock').status).toBe('skip')
  })
})

describe('doctor clock check against a server whose Date is set off', () => {
  let skewMs = 0
  let server: Server
  let url: string
  let dir: Awaited<ReturnType<typeof doctorDir>>
  let tokenRequests = 0

  beforeAll(async () => {
    // A token endpoint whose every answer carries its own Date (RFC 9110 §6.6.1), skewMs off.
    server = createServer((request, response) => {
      if (request.url === '/api/oauth/token') tokenRequests++
      response.sendDate = false
      response.writeHead(200, {
        'content-type': 'application/json',
        date: new Date(Date.now() + skewMs).toUTCString(),
      })
      response.end(
        JSON.stringify({ access_token: 'tok-never-shown', token_type: 'Bearer', expires_in: 3600 }),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    dir = await doctorDir()
    await writeConfig(dir.dir, { cloud: { url, clientId: 'hjc_x', clientSecret: 'hjs_y' } })
  })
  afterAll(async () => {
    await dir.remove()
    await new Promise((resolve) => server.close(resolve))
  })

  it('passes when the clocks agree, warns past a few seconds, fails past the cloud limit', async () => {
    const cases: [number, string, RegExp][] = [
      [0, 'pass', /this machine's clock (agrees with the cloud|is 1 s)/],
      // The cloud 30 s ahead: this machine is 30 s behind.
      [30_000, 'warn', /is (29|30|31) s behind the cloud/],
      [
        -(MAX_FUTURE_SKEW_SECONDS + 300) * 1000,
        'fail',
        /is (599|600|601) s ahead of the cloud: more than the 5 minutes/,
      ],
    ]
    for (const [skew, status, detail] of cases) {
      skewMs = skew
      const before = tokenRequests
      const json = await doctor(dir.dir, '--json')
      expect(tokenRequests).toBe(before + 1)
      expect(checkOf(json, 'clock'), `skew ${skew}`).toMatchObject({
        status,
        detail: expect.stringMatching(detail),
      })
      expect(checkOf(json, 'cloud credentials').status).toBe('pass')
      expect(json.code).toBe(status === 'fail' ? 1 : 0)
      expect(json.stdout).not.toContain('tok-never-shown')
    }
    skewMs = 30_000
    const human = await doctor(dir.dir)
    const [line, advice] = humanLines(human.stdout, 'clock')
    expect(line).toMatch(/^WARN {2}clock/)
    expect(advice).toMatch(/-> set this machine to sync its clock with NTP/)
  })
})

const openssl = await opensslSkipReason()

describe.skipIf(openssl !== undefined)(
  'doctor against an https cloud whose certificate does not verify',
  () => {
    it('fails the connection with the TLS advice, and skips the credentials', async () => {
      const dir = await doctorDir()
      const certificates = await makeTestCertificates(dir.dir)
      // Signed by a CA of the test's own, which this machine does not trust.
      const server = createHttpsServer(
        {
          cert: await readFile(certificates.serverCertFile),
          key: await readFile(certificates.serverKeyFile),
        },
        (_request, response) => response.end('{}'),
      )
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
        await writeConfig(dir.dir, { cloud: { url, clientId: 'hjc_x', clientSecret: 'hjs_y' } })
        const human = await doctor(dir.dir)
        expect(human.code).toBe(1)
        const [line, advice] = humanLines(human.stdout, 'cloud connection')
        expect(line).toMatch(/^FAIL {2}cloud connection .*TLS does not verify for 127\.0\.0\.1 \(/)
        expect(advice).toContain('NODE_EXTRA_CA_CERTS')
        expect(humanLines(human.stdout, 'cloud credentials')[0]).toMatch(
          /^SKIP .*the cloud cannot be reached/,
        )
      } finally {
        await new Promise((resolve) => server.close(resolve))
        await dir.remove()
      }
    })
  },
)
