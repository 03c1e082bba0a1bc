import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { DatabaseHandle } from './db/database.js'
import { AttendanceWorker, QUEUE_CONCURRENCY } from './features/attendance/attendance-worker.js'
import { WebhookDispatcher } from './features/webhooks/dispatcher.js'
import { WebhookSender } from './features/webhooks/webhook-sender.js'
import type { CloudMetrics } from './metrics/cloud-metrics.js'
import type { Services } from './services.js'
import type { WebhookSettings } from './settings/webhook-settings.js'

/** Expired records are dropped this often, off the request path. */
const PURGE_EVERY_MS = 3_600_000

export interface BackgroundJobsOptions {
  services: Services
  database: DatabaseHandle
  webhooks: WebhookSettings
  /** Run the webhook dispatcher in this process: the server does; tests choose. */
  dispatchWebhooks: boolean
  /** Run the attendance worker in this process (recompute, finalize, make days, jobs): the server does; tests choose. */
  computeAttendance: boolean
  /** Counts webhook attempts by outcome. */
  metrics?: Pick<CloudMetrics, 'attempt'>
  now: () => number
}

/**
 * What the cloud does besides answering requests: the hourly purge of expired idempotency keys,
 * long-expired tokens and ended console sessions, and the webhook dispatcher
 * (docs/decisions/0020-webhook-outbox.md), and the attendance worker
 * (docs/decisions/0085-attendance-days-are-a-pure-function.md). Each starts when the app is ready and stops when it closes.
 */
const backgroundJobsPlugin: FastifyPluginAsync<BackgroundJobsOptions> = async (app, options) => {
  const { services, database, webhooks, now } = options
  const purge = setInterval(() => {
    Promise.all([
      services.idempotency.purgeExpired(),
      services.tokens.purgeExpired(),
      services.consoleSessions.purgeExpired(),
    ]).then(
      ([keys, tokens, sessions]) =>
        keys + tokens + sessions > 0 && app.log.info({ keys, tokens, sessions }, 'expired records purged'),
      (err) => app.log.warn({ err }, 'purge of expired records failed'),
    )
  }, PURGE_EVERY_MS)
  purge.unref()
  app.addHook('onClose', async () => clearInterval(purge))

  if (options.dispatchWebhooks) {
    const dispatcher = new WebhookDispatcher({
      stores: services.stores,
      dialect: database.dialect,
      secretBox: database.secretBox,
      outbox: services.outbox,
      audit: services.audit,
      sender: new WebhookSender({
        policy: services.urlPolicy,
        timeoutSeconds: webhooks.timeoutSeconds,
        connectTimeoutSeconds: webhooks.connectTimeoutSeconds,
      }),
      durable: () => database.durable(),
      settings: webhooks,
      log: app.log.child({ component: 'webhooks' }),
      metrics: options.metrics,
      now,
    })
    app.addHook('onReady', async () => dispatcher.start())
    // Before the database closes (onClose): attempts in flight get a few seconds to finish.
    app.addHook('preClose', async () => dispatcher.stop())
  }
  if (options.computeAttendance) {
    const worker = new AttendanceWorker({
      stores: services.stores,
      recomputer: services.recomputer,
      queue: services.attendanceQueue,
      outbox: services.outbox,
      log: app.log.child({ component: 'attendance' }),
      now,
      queueConcurrency: QUEUE_CONCURRENCY[database.dialect],
    })
    app.addHook('onReady', async () => worker.start())
    app.addHook('preClose', async () => worker.stop())
  }
  app.addHook('onClose', async () => services.urlPolicy.close())
}

export const backgroundJobs = fp(backgroundJobsPlugin, { name: 'hajri-background-jobs' })
