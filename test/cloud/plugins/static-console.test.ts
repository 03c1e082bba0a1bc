import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import staticConsolePlugin, {
  CONSOLE_CSP,
  defaultConsoleRoot,
} from '../../../cloud/plugins/static-console.js'

const INDEX =
  '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1a2b3c.js"></script>'
const SCRIPT = 'console.log("console")'

/** A console build as Vite lays it out, and the app around it as cloud/app.ts builds it. */
async function appServing(root: string): Promise<FastifyInstance> {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
  await app.register(staticConsolePlugin, { root })
  app.get('/api/ping', async () => ({ ok: true }))
  await app.ready()
  return app
}

describe('the console at /console (cloud/plugins/static-console.ts)', () => {
  let dir: string
  let app: FastifyInstance

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-console-'))
    const root = join(dir, 'console')
    await mkdir(join(root, 'assets'), { recursive: true })
    await writeFile(join(root, 'index.html'), INDEX)
    await writeFile(join(root, 'assets', 'app-1a2b3c.js'), SCRIPT)
    await writeFile(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    // Beside the build, never to be served.
    await writeFile(join(dir, 'secret.txt'), 'not for the web')
    app = await appServing(root)
  })

  afterAll(async () => {
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('answers index.html for /console and every client route under it, revalidated on each use', async () => {
    for (const url of [
      '/console',
      '/console/',
      '/console/keys',
      '/console/webhooks/',
      '/console/deliveries?status=failed',
    ]) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(200)
      expect(res.headers['content-type'], url).toMatch(/^text\/html/)
      expect(res.body, url).toBe(INDEX)
      expect(res.headers['cache-control'], url).toBe('no-cache')
    }
    const head = await app.inject({ method: 'HEAD', url: '/console/audit' })
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
  })

  it('sends a strict Content-Security-Policy: only its own origin, no inline code, no framing', async () => {
    const res = await app.inject({ url: '/console/' })
    const csp = String(res.headers['content-security-policy'])
    expect(csp).toBe(CONSOLE_CSP)
    const directives = Object.fromEntries(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/)
        return [name, values.join(' ')]
      }),
    )
    expect(directives).toMatchObject({
      'default-src': "'self'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'object-src': "'none'",
      'base-uri': "'none'",
      'frame-ancestors': "'none'",
    })
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*|data:|http:/)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
  })

  it('caches hashed assets for a year, other files not, and never caches a 404', async () => {
    const script = await app.inject({ url: '/console/assets/app-1a2b3c.js' })
    expect(script.statusCode).toBe(200)
    expect(script.headers['content-type']).toMatch(/javascript/)
    expect(script.body).toBe(SCRIPT)
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(script.headers['content-security-policy']).toBe(CONSOLE_CSP)

    const icon = await app.inject({ url: '/console/favicon.svg' })
    expect(icon.statusCode).toBe(200)
    expect(icon.headers['cache-control']).toBe('public, max-age=0')

    for (const url of ['/console/assets/app-000000.js', '/console/logo.png']) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(404)
      expect(String(res.headers['cache-control'] ?? ''), url).not.toMatch(/max-age=[1-9]|immutable/)
    }
  })

  it('serves nothing outside the build, however the path is spelled', async () => {
    for (const url of [
      '/console/../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/..%2fsecret.txt',
      '/console/assets/..%2f..%2fsecret.txt',
      '/console/.hidden',
      '/console/assets/%00.js',
    ]) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400)
      expect(res.statusCode, url).toBeLessThan(500)
      expect(res.body, url).not.toContain('not for the web')
    }
  })

  it('leaves other routes alone: no console headers on the API', async () => {
    const res = await app.inject({ url: '/api/ping' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-security-policy']).toBeUndefined()
  })
})

describe('the console when it has not been built', () => {
  let dir: string
  let app: FastifyInstance

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-console-missing-'))
    app = await appServing(join(dir, 'console'))
  })

  afterAll(async () => {
    await app?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('still starts, and /console says, in a 503 page, to run npm run build', async () => {
    for (const url of ['/console', '/console/', '/console/keys', '/console/assets/app.js']) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(503)
      expect(res.headers['content-type'], url).toMatch(/^text\/html/)
      expect(res.headers['cache-control'], url).toBe('no-store')
      expect(res.body, url).toContain('npm run build')
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP)
    }
    expect((await app.inject({ url: '/api/ping' })).statusCode).toBe(200)
  })
})

describe('where the build is looked for', () => {
  it('is dist/console of the package, whether the server runs from source or compiled', async () => {
    const pkg = await mkdtemp(join(tmpdir(), 'hajri-package-'))
    try {
      await writeFile(join(pkg, 'package.json'), '{}')
      const fromSource = pathToFileURL(join(pkg, 'cloud', 'plugins', 'static-console.ts')).href
      const compiled = pathToFileURL(join(pkg, 'dist', 'cloud', 'plugins', 'static-console.js')).href
      expect(defaultConsoleRoot(fromSource)).toBe(join(pkg, 'dist', 'console'))
      expect(defaultConsoleRoot(compiled)).toBe(join(pkg, 'dist', 'console'))
    } finally {
      await rm(pkg, { recursive: true, force: true })
    }
  })
})
