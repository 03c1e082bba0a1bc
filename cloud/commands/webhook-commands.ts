import type { WebhookEndpoint } from '../../shared/webhooks.js'
import { DEFAULT_SECRET_GRACE_SECONDS } from '../features/webhooks/endpoint-service.js'
import { command, durationText } from './command-context.js'

const describe = (e: WebhookEndpoint) =>
  [
    e.id,
    e.status.padEnd(8),
    e.url,
    e.events.length === 0 ? '(every event)' : e.events.join(','),
    e.disabledReason ? `disabled: ${e.disabledReason}` : '',
  ]
    .join('  ')
    .trimEnd()

/** `webhook create --tenant ID --url URL [--events a,b] [--description TEXT] --json` → {id, secret, ...}. */
const create = command({
  name: 'webhook create',
  usage: '--tenant ID --url URL [--events a,b] [--description TEXT]',
  options: ['tenant', 'url', 'events', 'description'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const input = {
      url: context.required('url'),
      ...(context.options.events !== undefined ? { events: context.list('events') } : {}),
      ...(context.options.description !== undefined ? { description: context.options.description } : {}),
    }
    const { endpoint, secret } = await context.withServices((services) =>
      services.webhookEndpoints.create(
        tenantId,
        input as Parameters<typeof services.webhookEndpoints.create>[1],
        context.actor,
      ),
    )
    context.print(
      { ...endpoint, secret },
      `webhook endpoint ${endpoint.id} → ${endpoint.url}\nsigning secret: ${secret}\n` +
        '(verify every delivery with it; `webhook reveal-secret` shows it again, and is audited)',
    )
  },
})

const list = command({
  name: 'webhook list',
  usage: '--tenant ID',
  options: ['tenant'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const endpoints = await context.withServices((services) => services.webhookEndpoints.list(tenantId))
    context.print(
      endpoints,
      endpoints.length === 0 ? 'no webhook endpoints' : endpoints.map(describe).join('\n'),
    )
  },
})

/** Commands of the form `webhook <verb> --tenant ID ENDPOINT_ID`. */
function onEndpoint(verb: 'pause' | 'resume' | 'delete', done: string) {
  return command({
    name: `webhook ${verb}`,
    usage: '--tenant ID ENDPOINT_ID',
    operand: { name: 'ENDPOINT_ID', what: 'id of the webhook endpoint (whk_...)' },
    options: ['tenant'],
    run: async (context) => {
      const tenantId = context.required('tenant')
      const id = context.operand()
      const result = await context.withServices(async (services) => {
        const endpoints = services.webhookEndpoints
        if (verb === 'pause') return endpoints.pause(tenantId, id, context.actor)
        if (verb === 'resume') return endpoints.resume(tenantId, id, context.actor)
        await endpoints.remove(tenantId, id, context.actor)
        return { id, deleted: true }
      })
      context.print(result, `webhook endpoint ${id} ${done}`)
    },
  })
}

const test = command({
  name: 'webhook test',
  usage: '--tenant ID ENDPOINT_ID',
  options: ['tenant'],
  operand: { name: 'ENDPOINT_ID', what: 'id of the webhook endpoint (whk_...)' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand()
    const result = await context.withServices((services) =>
      services.webhookEndpoints.sendTest(tenantId, id, context.actor),
    )
    context.print(
      result,
      `test event ${result.messageId} queued for ${id}; see it with \`deliveries list --endpoint ${id}\``,
    )
  },
})

const rotateSecret = command({
  name: 'webhook rotate-secret',
  usage: `--tenant ID ENDPOINT_ID [--grace ${durationText(DEFAULT_SECRET_GRACE_SECONDS, 'h')}]`,
  options: ['tenant', 'grace'],
  operand: { name: 'ENDPOINT_ID', what: 'id of the webhook endpoint (whk_...)' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand()
    const grace = context.duration('grace')
    const result = await context.withServices((services) =>
      services.webhookEndpoints.rotateSecret(tenantId, id, context.actor, grace),
    )
    context.print(
      result,
      `new signing secret: ${result.secret}\nthe old one keeps signing, beside it, until ${result.previousSecretsExpireAt}`,
    )
  },
})

const revealSecret = command({
  name: 'webhook reveal-secret',
  usage: '--tenant ID ENDPOINT_ID',
  options: ['tenant'],
  operand: { name: 'ENDPOINT_ID', what: 'id of the webhook endpoint (whk_...)' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand()
    const result = await context.withServices((services) =>
      services.webhookEndpoints.revealSecret(tenantId, id, context.actor),
    )
    context.print(result, result.secret)
  },
})

export const webhookCommands = [
  create,
  list,
  onEndpoint('pause', 'paused: deliveries are held until it is resumed'),
  onEndpoint('resume', 'resumed: held deliveries go out now, oldest first'),
  onEndpoint('delete', 'deleted'),
  test,
  revealSecret,
  rotateSecret,
]
