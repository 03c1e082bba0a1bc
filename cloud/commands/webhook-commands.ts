import type { WebhookEndpoint } from '../../shared/webhooks.js'
import type { Actor } from '../auth/actor.js'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../features/secret-rotation.js'
import type { Services } from '../services.js'
import { command } from './command-context.js'
import { rotateSecretCommand } from './rotate-secret-command.js'
import { tenantItemCommand } from './tenant-item-command.js'
import { tenantListCommand } from './tenant-list-command.js'

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

const list = tenantListCommand({
  name: 'webhook list',
  list: (services, tenantId) => services.webhookEndpoints.list(tenantId),
  none: 'no webhook endpoints',
  describe,
})

const ENDPOINT = { name: 'ENDPOINT_ID', what: 'id of the webhook endpoint (whk_...)' }

/** Commands of the form `webhook <verb> --tenant ID ENDPOINT_ID`. */
function onEndpoint<T>(
  verb: string,
  act: (endpoints: Services['webhookEndpoints'], tenantId: string, id: string, actor: Actor) => Promise<T>,
  human: (result: T, id: string) => string,
) {
  return tenantItemCommand({
    name: `webhook ${verb}`,
    operand: ENDPOINT,
    act: (services, tenantId, id, actor) => act(services.webhookEndpoints, tenantId, id, actor),
    human,
  })
}

const pause = onEndpoint(
  'pause',
  (endpoints, tenantId, id, actor) => endpoints.pause(tenantId, id, actor),
  (_, id) => `webhook endpoint ${id} paused: deliveries are held until it is resumed`,
)

const resume = onEndpoint(
  'resume',
  (endpoints, tenantId, id, actor) => endpoints.resume(tenantId, id, actor),
  (_, id) => `webhook endpoint ${id} resumed: held deliveries go out now, oldest first`,
)

const remove = onEndpoint(
  'delete',
  async (endpoints, tenantId, id, actor) => {
    await endpoints.remove(tenantId, id, actor)
    return { id, deleted: true }
  },
  (_, id) => `webhook endpoint ${id} deleted`,
)

const test = onEndpoint(
  'test',
  (endpoints, tenantId, id, actor) => endpoints.sendTest(tenantId, id, actor),
  (result, id) =>
    `test event ${result.messageId} queued for ${id}; see it with \`deliveries list --endpoint ${id}\``,
)

const rotateSecret = rotateSecretCommand({
  name: 'webhook rotate-secret',
  operand: ENDPOINT,
  defaultGraceSeconds: DEFAULT_ROTATION_GRACE_SECONDS,
  rotate: (services, tenantId, id, actor, graceSeconds) =>
    services.webhookEndpoints.rotateSecret(tenantId, id, actor, graceSeconds),
  human: (result) =>
    `new signing secret: ${result.secret}\nthe old one keeps signing, beside it, until ${result.previousSecretsExpireAt}`,
})

const revealSecret = onEndpoint(
  'reveal-secret',
  (endpoints, tenantId, id, actor) => endpoints.revealSecret(tenantId, id, actor),
  (result) => result.secret,
)

export const webhookCommands = [create, list, pause, resume, remove, test, revealSecret, rotateSecret]
