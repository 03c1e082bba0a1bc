import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../app-error.js'

/**
 * Keys must not be used in browser code (docs/decisions/0006-no-api-keys-in-browsers.md). Browsers send
 * `Origin` on cross-origin requests and on every POST, so a request carrying one comes from a web page: it is
 * refused before anything else is done with it. No CORS headers are ever sent, so a browser would
 * not let the page read an answer anyway; this makes the mistake loud instead of mysterious.
 */
const browserOriginPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', async (request) => {
    if (request.headers.origin !== undefined) {
      throw new AppError(
        'browser_origin_forbidden',
        'Hajri credentials are for servers. Call this API from your backend, never from browser code.',
      )
    }
  })
}

export default fp(browserOriginPlugin, { name: 'hajri-browser-origin' })
