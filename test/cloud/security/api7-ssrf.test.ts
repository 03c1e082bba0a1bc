/**
 * OWASP API7:2023 Server Side Request Forgery: webhook URLs. The basics are in
 * test/cloud/features/webhooks/ssrf.test.ts (loopback, private, link-local and metadata literals, a
 * name resolving to loopback, the allowlist). These are the gaps it left: other spellings of an
 * address (octal, decimal, short and IPv6 forms), userinfo tricks, DNS answers that point inside
 * (rebinding, mixed answers, IPv6 translations), and redirects.
 */
import { request } from 'node:http'
import type { LookupFunction } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookUrlPolicy } from '../../../cloud/features/webhooks/url-policy.js'
import { generateSigningSecret, WebhookSender } from '../../../cloud/features/webhooks/webhook-sender.js'
import { describeEachDatabase } from '../../support/cloud-harness.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole } from '../features/webhooks/webhook-kit.js'

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

/** Each an address no webhook may reach, written in a way a plain check might miss. */
const DISGUISED = [
  // Octal, hexadecimal, decimal and short IPv4 (the WHATWG URL parser reads them all as 127.0.0.1).
  'https://0177.0.0.1/hook',
  'https://017700000001/hook',
  'https://0x7f000001/hook',
  'https://127.1/hook',
  'https://127.0.0.1./hook',
  'https://0/hook',
  'https://10.1/hook',
  'https://0xa9.0xfe.0xa9.0xfe/latest/meta-data/',
  // IPv6: mapped, compatible, NAT64, 6to4, unique local (AWS's IPv6 metadata address), unspecified.
  'https://[::ffff:7f00:1]/hook',
  'https://[0:0:0:0:0:ffff:127.0.0.1]/hook',
  // Regression: IPv4-compatible IPv6 (::/96, deprecated) was taken for a public address.
  'https://[::127.0.0.1]/hook',
  'https://[::169.254.169.254]/latest/meta-data/',
  'https://[64:ff9b::7f00:1]/hook',
  'https://[2002:7f00:1::1]/hook',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://[fc00::1]/hook',
  'https://[::]/hook',
  'https://[fe80::1%25eth0]/hook',
  // Other non-public IPv4 ranges: shared (CGNAT), benchmarking, multicast, broadcast.
  'https://100.64.0.1/hook',
  'https://198.18.0.1/hook',
  'https://224.0.0.1/hook',
  'https://255.255.255.255/hook',
  // Userinfo: what precedes @ is not the host.
  'https://hooks.example.com@127.0.0.1/hook',
  'https://hooks.example.com:443@169.254.169.254/latest/meta-data/',
  'https://127.0.0.1#@hooks.example.com/hook',
  'https://hooks.example.com%40127.0.0.1/hook',
]

describeEachDatabase(
  'OWASP API7: disguised addresses are refused at registration',
  (cloud) => {
    it('refuses every other spelling of a loopback, private, link-local or metadata address, and userinfo tricks', async () => {
      const api = await newTenantConsole(cloud)
      for (const url of DISGUISED) {
        const res = await api.post('/webhooks', { url })
        expect([url, res.statusCode, res.json().code]).toEqual([url, 400, 'validation_failed'])
      }
      const { id } = await createEndpoint(api, { url: 'https://hooks.example.com/hook' })
      for (const url of DISGUISED)
        expect((await api.patch(`/webhooks/${id}`, { url })).statusCode, url).toBe(400)
      // A backslash is a slash in an https URL: this one is for hooks.example.com, and is stored as such.
      const backslash = await api.post('/webhooks', { url: 'https://hooks.example.com\\@127.0.0.1/hook' })
      expect(backslash.statusCode).toBe(201)
      expect(new URL(backslash.json().url).hostname).toBe('hooks.example.com')
    })
  },
  { webhooks: { retrySchedule: [0], allowlist: [] } },
)

describe('OWASP API7: DNS answers that point inside are refused when connecting', () => {
  const policy = new WebhookUrlPolicy([])
  afterAll(() => policy.close())

  /** A GET through the policy's agents, with DNS answered by `answers` in turn; the error, if any. */
  function fetchWith(url: string, answers: string[][], through = policy): Promise<string | null> {
    let call = 0
    const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      const addresses = (answers[Math.min(call++, answers.length - 1)] ?? []).map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }))
      if (options.all) callback(null, addresses)
      else callback(null, addresses[0]?.address, addresses[0]?.family)
    }) as unknown as LookupFunction
    return new Promise((resolve) => {
      const target = new URL(url)
      const req = request(target, { agent: through.agentsFor(target).http, lookup, timeout: 5000 }, (res) => {
        res.resume()
        resolve(null)
      })
      req.on('error', (err) => resolve(err.message))
      req.on('timeout', () => req.destroy(new Error('timed out')))
      req.end()
    })
  }

  it('refuses a name whose answer is, or includes, an inside address, in any form', async () => {
    const before = receiver.connections
    const host = `rebind.example:${receiver.port}`
    for (const answer of [
      ['127.0.0.1'],
      ['93.184.215.14', '127.0.0.1'],
      ['::ffff:127.0.0.1'],
      ['::ffff:7f00:1'],
      // Regression: IPv4-compatible IPv6 was "unicast" to the filter.
      ['::7f00:1'],
      ['::a9fe:a9fe'],
      ['64:ff9b::7f00:1'],
      ['2002:7f00:1::1'],
      ['169.254.169.254'],
      ['fd00:ec2::254'],
      ['100.64.0.1'],
      ['0.0.0.0'],
      ['::'],
    ]) {
      const error = await fetchWith(`http://${host}/rebind`, [answer])
      expect([answer, error]).toEqual([answer, expect.stringMatching(/is not allowed/)])
    }
    expect(receiver.connections).toBe(before)
  })

  it('refuses an IPv4-compatible literal when connecting too, had the URL got in some other way', async () => {
    const sender = new WebhookSender({ policy, timeoutSeconds: 2 })
    for (const host of ['[::7f00:1]', '[::127.0.0.1]', '[::a9fe:a9fe]']) {
      const result = await sender.send(`http://${host}:${receiver.port}/literal`, 'msg_literal', '{}', [
        generateSigningSecret(),
      ])
      expect([host, result.status, result.error]).toEqual([
        host,
        null,
        expect.stringMatching(/is not allowed/),
      ])
    }
  })

  it('checks each connection on its own: a name that answered an allowed address once and loopback next is refused next', async () => {
    // 127.0.0.2 stands for an allowed address: allowlisted here, and nothing listens there, so the
    // connection is let through and then refused by the kernel, not by the policy.
    const allowing = new WebhookUrlPolicy(['127.0.0.2'])
    try {
      const before = receiver.connections
      const first = await fetchWith(`http://flip.example:${receiver.port}/first`, [['127.0.0.2']], allowing)
      expect(first).toMatch(/ECONNREFUSED/)
      const second = await fetchWith(`http://flip.example:${receiver.port}/second`, [['127.0.0.1']], allowing)
      expect(second).toMatch(/is not allowed/)
      expect(receiver.connections).toBe(before)
    } finally {
      allowing.close()
    }
  })
})

describe('OWASP API7: redirects are answers, never followed', () => {
  it('does not follow a 3xx, to the metadata address or anywhere', async () => {
    const policy = new WebhookUrlPolicy(['127.0.0.1'])
    try {
      const sender = new WebhookSender({ policy, timeoutSeconds: 5 })
      for (const [status, location] of [
        [302, 'http://169.254.169.254/latest/meta-data/'],
        [307, receiver.url('/redirected')],
        [308, receiver.url('/redirected')],
      ] as const) {
        receiver.respondAt('/redirecting', { status, headers: { location } })
        const result = await sender.send(receiver.url('/redirecting'), 'msg_redirect', '{}', [
          generateSigningSecret(),
        ])
        expect([status, result.status, result.error]).toEqual([status, status, null])
      }
      expect(receiver.to('/redirected')).toHaveLength(0)
      expect(receiver.to('/redirecting')).toHaveLength(3)
    } finally {
      policy.close()
    }
  })
})
