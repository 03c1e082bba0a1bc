import type { WebhookEndpoint } from '../../shared/webhooks.js'
import type { Command } from './command-context.js'

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
const create: Command = async (context) => {
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
}

const list: Command = async (context) => {
  const tenantId = context.required('tenant')
  const endpoints = await context.withServices((services) => services.webhookEndpoints.list(tenantId))
  context.print(
    endpoints,
    endpoints.length === 0 ? 'no webhook endpoints' : endpoints.map(describe).join('\n'),
  )
}

/** Commands of the form `webhook <verb> --tenant ID ENDPOINT_ID`. */
function onEndpoint(verb: 'pause' | 'resume' | 'delete', done: string): Command {
  return async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand('id of the webhook endpoint (whk_...)')
    const result = await context.withServices(async (services) => {
      const endpoints = services.webhookEndpoints
      if (verb === 'pause') return endpoints.pause(tenantId, id, context.actor)
      if (verb === 'resume') return endpoints.resume(tenantId, id, context.actor)
      await endpoints.remove(tenantId, id, context.actor)
      return { id, deleted: true }
    })
    context.print(result, `webhook endpoint ${id} ${done}`)
  }
}

const test: Command = async (context) => {
  const tenantId = context.required('tenant')
  const id = context.operand('id of the webhook endpoint (whk_...)')
  const result = await context.withServices((services) =>
    services.webhookEndpoints.sendTest(tenantId, id, context.actor),
  )
  context.print(
    result,
    `test event ${result.messageId} queued for ${id}; see it with \`deliveries list --endpoint ${id}\``,
  )
}

const rotateSecret: Command = async (context) => {
  const tenantId = context.required('tenant')
  const id = context.operand('id of the webhook endpoint (whk_...)')
  const grace = context.duration('grace')
  const result = await context.withServices((services) =>
    services.webhookEndpoints.rotateSecret(tenantId, id, context.actor, grace),
  )
  context.print(
    result,
    `new signing secret: ${result.secret}\nthe old one keeps signing, beside it, until ${result.previousSecretsExpireAt}`,
  )
}

const revealSecret: Command = async (context) => {
  const tenantId = context.required('tenant')
  const id = context.operand('id of the webhook endpoint (whk_...)')
  const result = await context.withServices((services) =>
    services.webhookEndpoints.revealSecret(tenantId, id, context.actor),
  )
  context.print(result, result.secret)
}

export const webhookCommands: Record<string, Command> = {
  'webhook create': create,
  'webhook list': list,
  'webhook pause': onEndpoint('pause', 'paused: deliveries are held until it is resumed'),
  'webhook resume': onEndpoint('resume', 'resumed: held deliveries go out now, oldest first'),
  'webhook delete': onEndpoint('delete', 'deleted'),
  'webhook test': test,
  'webhook rotate-secret': rotateSecret,
  'webhook reveal-secret': revealSecret,
}
