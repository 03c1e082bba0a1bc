import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../shared/pagination.js'
import { isWebhookEventType } from '../../shared/webhook-events.js'
import { DELIVERY_STATUSES, type DeliveryListQuery, type WebhookDelivery } from '../../shared/webhooks.js'
import { command, UsageError } from './command-context.js'
import { tenantItemCommand } from './tenant-item-command.js'

const describe = (d: WebhookDelivery) =>
  [
    d.id,
    d.status.padEnd(9),
    `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`.padEnd(11),
    d.eventType.padEnd(24),
    d.endpointId,
    d.nextAttemptAt ? `next ${d.nextAttemptAt}` : '',
  ]
    .join('  ')
    .trimEnd()

/** `deliveries list --tenant ID [--endpoint ID] [--status S] [--event-type T] [--from T] [--to T] [--limit N] [--cursor C]`. */
const list = command({
  name: 'deliveries list',
  usage: `--tenant ID [--endpoint ID] [--status failed] [--event-type TYPE]\n[--from TIME] [--to TIME] [--limit ${DEFAULT_PAGE_LIMIT}] [--cursor C]`,
  options: ['tenant', 'endpoint', 'status', 'event-type', 'from', 'to', 'limit', 'cursor'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const { status, 'event-type': eventType } = context.options
    if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`)
    }
    if (eventType !== undefined && !isWebhookEventType(eventType))
      throw new UsageError(`--event-type: unknown event "${eventType}"`)
    const limit = context.wholeNumber('limit') ?? DEFAULT_PAGE_LIMIT
    if (limit < 1 || limit > MAX_PAGE_LIMIT)
      throw new UsageError(`--limit must be from 1 to ${MAX_PAGE_LIMIT}`)
    const query = Object.fromEntries(
      Object.entries({
        endpointId: context.options.endpoint,
        status,
        eventType,
        from: context.options.from,
        to: context.options.to,
        cursor: context.options.cursor,
        limit,
      }).filter(([, v]) => v !== undefined),
    ) as DeliveryListQuery
    const page = await context.withServices((services) => services.webhookDeliveries.list(tenantId, query))
    const human = page.data.length === 0 ? 'no deliveries' : page.data.map(describe).join('\n')
    context.print(page, page.nextCursor ? `${human}\nmore: --cursor ${page.nextCursor}` : human)
  },
})

const DELIVERY = { name: 'DELIVERY_ID', what: 'id of the delivery (dlv_...)' }

const show = tenantItemCommand({
  name: 'deliveries show',
  operand: DELIVERY,
  act: (services, tenantId, id) => services.webhookDeliveries.show(tenantId, id),
  human: (d) =>
    [
      describe(d),
      `message ${d.messageId}, ${d.payload.size} bytes, sha256 ${d.payload.sha256}`,
      ...d.attemptLog.map(
        (a) =>
          `  #${a.number} ${a.at} ${a.trigger.padEnd(9)} ${a.responseStatus ?? '---'} ${a.durationMs} ms${a.error ? `  ${a.error}` : ''}`,
      ),
    ].join('\n'),
})

const retry = tenantItemCommand({
  name: 'deliveries retry',
  operand: DELIVERY,
  act: (services, tenantId, id, actor) => services.webhookDeliveries.retry(tenantId, id, actor),
  human: (d) => `delivery ${d.id} will be attempted again now (the running server sends it)`,
})

/** `deliveries replay --tenant ID --endpoint ID --since TIME`. */
const replay = command({
  name: 'deliveries replay',
  usage: '--tenant ID --endpoint ID --since 2026-11-20T00:00:00+05:30',
  options: ['tenant', 'endpoint', 'since'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const endpointId = context.required('endpoint')
    const since = context.required('since')
    const result = await context.withServices((services) =>
      services.webhookDeliveries.replay(tenantId, endpointId, since, context.actor),
    )
    context.print(result, `${result.replayed} failed deliveries to ${endpointId} will be attempted again now`)
  },
})

export const deliveryCommands = [list, show, retry, replay]
