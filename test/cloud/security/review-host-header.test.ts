/**
 * Security review #11: with HAJRI_PUBLIC_URL unset, the Host
 * header was reflected into the OAuth metadata (`"issuer":"http://a\"b<script>"`), and a request
 * with two Host headers was accepted. RFC 9112 §3.2: more than one Host, or one that is not valid,
 * is a 400. A cloud that listens beyond loopback does not start without HAJRI_PUBLIC_URL.
 */
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { loadCloudConfig } from '../../../cloud/config.js'
import { ConfigError } from '../../../cloud/settings/config-error.js'
import { TestCloud } from '../../support/cloud-harness.js'

/** A raw HTTP/1.1 exchange: node's own clients will not send two Host headers or a bad one. */
function raw(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\nConnection: close\r\n\r\n`))
    let text = ''
    socket.on('data', (chunk) => (text += chunk))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}

const METADATA = '/.well-known/oauth-authorization-server'

describe('the Host header', () => {
  const cloud = new TestCloud('sqlite')
  let app: FastifyInstance
  let port = 0

  beforeAll(async () => {
    await cloud.start()
    app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
    })
    await app.listen({ host: '127.0.0.1', port: 0 })
    port = (app.server.address() as { port: number }).port
  })
  afterAll(async () => {
    await app?.close()
    await cloud.stop()
  })

  it('security review #11: refuses a Host that is not a host name, and never reflects it', async () => {
    for (const host of ['a"b<script>', 'a b', 'evil.example/path', "x'y", 'host:port:9', '']) {
      const answer = await raw(port, `GET ${METADATA} HTTP/1.1\r\nHost: ${host}`)
      expect(answer, JSON.stringify(host)).toMatch(/^HTTP\/1\.1 400 /)
      expect(answer).not.toContain('<script>')
      expect(answer).not.toContain('"issuer"')
    }
  })

  it('security review #11: refuses a request with two Host headers', async () => {
    const answer = await raw(
      port,
      `GET ${METADATA} HTTP/1.1\r\nHost: hajri.example.com\r\nHost: evil.example`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).not.toContain('evil.example')
  })

  it('security review #11: still answers a valid Host, a name or an address, with a port', async () => {
    for (const host of ['hajri.example.com', 'localhost:8080', '127.0.0.1:8080', '[::1]:8080']) {
      const answer = await raw(port, `GET ${METADATA} HTTP/1.1\r\nHost: ${host}`)
      expect(answer, host).toMatch(/^HTTP\/1\.1 200 /)
      expect(answer).toContain(`"issuer":"http://${host}"`)
    }
  })
})

describe('the public URL', () => {
  it('security review #11: a cloud listening beyond loopback does not start without HAJRI_PUBLIC_URL', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'hajri.internal']) {
      let error: unknown
      try {
        loadCloudConfig({ HAJRI_HOST: host })
      } catch (err) {
        error = err
      }
      expect(error, host).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).problems, host).toEqual([
        expect.stringMatching(/^HAJRI_PUBLIC_URL: required when HAJRI_HOST .* is not a loopback address/),
      ])
      expect(
        loadCloudConfig({ HAJRI_HOST: host, HAJRI_PUBLIC_URL: 'https://hajri.example.com' }).publicUrl,
      ).toBe('https://hajri.example.com')
    }
    for (const host of ['127.0.0.1', '::1', 'localhost', '']) {
      expect(loadCloudConfig({ HAJRI_HOST: host }).publicUrl, host).toBeUndefined()
    }
  })
})
