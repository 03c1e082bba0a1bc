import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'

/**
 * The console's headers. The page's code comes only from this server: no inline
 * script or style, no eval, no framing (clickjacking), no plugins, no `<base>` tricks; it talks only
 * to its own origin's API.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** Vite names these files after a hash of their content: a new build is a new name, so they never change. */
const HASHED_ASSETS = 'assets/'
const IMMUTABLE = { maxAge: '365d', immutable: true }
/** Everything else (index.html above all) is checked with the server on each use, so a new build shows at once. */
const REVALIDATE = { maxAge: 0 }

/**
 * Where the build is: `dist/console` of the package. This file is `cloud/plugins/` when run from
 * source (tsx, tests) and `dist/cloud/plugins/` when compiled.
 */
export function defaultConsoleRoot(moduleUrl: string = import.meta.url): string {
  const above = resolve(dirname(fileURLToPath(moduleUrl)), '../..')
  return existsSync(join(above, 'package.json')) ? join(above, 'dist', 'console') : join(above, 'console')
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Hajri console: not built</title></head>
<body>
<h1>The Hajri console has not been built</h1>
<p>This hajri-cloud has no console files to serve. In the Hajri package directory, run
<code>npm run build</code> (<code>npm ci</code> runs it too), then restart hajri-cloud.</p>
<p>The API works without the console: see <a href="/docs">/docs</a>.</p>
</body>
</html>
`

/** A path under /console that is a page of the single-page app rather than a file: no extension. */
function isClientRoute(path: string): boolean {
  const last = path.split('/').pop() ?? ''
  return !last.includes('.')
}

/**
 * Serves the console's Vite build at /console: hashed assets with
 * a year's cache, every other path that names no file gets index.html (the app routes in the
 * browser), all with a strict Content-Security-Policy. Without a build the server still starts,
 * and /console says how to build it.
 */
const staticConsolePlugin: FastifyPluginAsync<{ root?: string }> = async (app, options) => {
  const root = options.root ?? defaultConsoleRoot()
  const built = existsSync(join(root, 'index.html'))

  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS)
  })

  if (!built) {
    app.log.warn({ root }, 'the console is not built: /console answers 503 until `npm run build` has run')
    const notBuilt = async (_request: unknown, reply: FastifyReply) =>
      reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT_PAGE)
    app.get('/console', { schema: { hide: true } }, notBuilt)
    app.get('/console/*', { schema: { hide: true } }, notBuilt)
    return
  }

  // Only reply.sendFile: the routes below choose what to send.
  await app.register(fastifyStatic, { root, serve: false })

  const sendIndex = (reply: FastifyReply) =>
    reply.header('cache-control', 'no-cache').sendFile('index.html', root, { cacheControl: false })

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => sendIndex(reply))
  app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.params['*']
    // @fastify/send refuses paths that leave the root too; these never name a file of the build.
    if (
      path.split('/').some((segment) => segment === '..' || segment.startsWith('.')) ||
      path.includes('\0')
    ) {
      return reply.callNotFound()
    }
    if (path === '' || isClientRoute(path)) return sendIndex(reply)
    // Cache-Control only goes on a file found: a 404 must not be kept for a year.
    return reply.sendFile(path, root, path.startsWith(HASHED_ASSETS) ? IMMUTABLE : REVALIDATE)
  })
}

// Not wrapped in fastify-plugin: the onSend hook and reply.sendFile stay inside this plugin's routes.
export default staticConsolePlugin
