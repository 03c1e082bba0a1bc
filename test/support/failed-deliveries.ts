import { WebhookDispatcher } from '../../cloud/features/webhooks/dispatcher.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../cloud/settings/webhook-settings.js'
import { TEST_ACTOR, type TestCloud } from './cloud-harness.js'

/**
 * Exhausted deliveries to work with, without any network: `perEndpoint` test events to each
 * endpoint, attempted once each by a dispatcher whose every attempt gets a 500. Returns their ids,
 * oldest first. The cloud must run no dispatcher of its own.
 */
export async function makeFailedDeliveries(
  cloud: TestCloud,
  tenantId: string,
  endpointIds: readonly string[],
  perEndpoint: number,
): Promise<string[]> {
  for (const id of endpointIds) {
    for (let i = 0; i < perEndpoint; i++)
      await cloud.services.webhookEndpoints.sendTest(tenantId, id, TEST_ACTOR)
  }
  const dispatcher = new WebhookDispatcher({
    stores: cloud.services.stores,
    dialect: cloud.database.dialect,
    secretBox: cloud.database.secretBox,
    outbox: cloud.services.outbox,
    audit: cloud.services.audit,
    sender: {
      send: async () => ({ status: 500, durationMs: 1, body: 'down', error: null, retryAfterMs: undefined }),
    },
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, retrySchedule: [0] },
    log: { error: () => {}, warn: () => {}, debug: () => {} },
    now: cloud.now,
  })
  const deliveries = () =>
    cloud.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'status'])
      .where('tenant_id', '=', tenantId)
      .where('endpoint_id', 'in', [...endpointIds])
      .orderBy('id')
      .execute()
  dispatcher.start()
  try {
    // Used from beforeAll hooks, where expect.poll is not available.
    for (let tries = 0; tries < 400; tries++) {
      const rows = await deliveries()
      if (rows.length === endpointIds.length * perEndpoint && rows.every((r) => r.status === 'exhausted')) {
        return rows.map((r) => r.id)
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error('the failing dispatcher round did not finish in 10 s')
  } finally {
    await dispatcher.stop()
  }
}
