import { newId } from '../../../shared/ids.js'
import type { DeliveryStore, EventLock, EventRow } from './delivery-store.js'
import type { EndpointStore } from './endpoint-store.js'

/** The stores a fan-out uses: those of the transaction it runs in. */
export interface FanOutStores {
  deliveries: Pick<DeliveryStore, 'unfannedEvents' | 'insertDeliveries' | 'markFannedOut'>
  endpoints: Pick<EndpointStore, 'subscribers'>
}

/**
 * Makes one delivery per endpoint that wants it of each event not yet fanned out, oldest event first,
 * through the stores of the transaction it runs in; returns how many events it took. The dispatcher calls it in a loop over every tenant. An endpoint
 * change that alters who gets what (registration, new events, a resume) calls it for its tenant
 * first, in its own transaction, so that the events emitted before the change go by the endpoints as
 * they were: a new endpoint hears nothing from before it existed, and a filter applies from when it
 * was set, whatever the dispatcher's lag.
 *
 * On PostgreSQL only events this transaction holds locked are fanned out (see unfannedEvents): so no
 * other transaction inserts the same deliveries or marks the same events meanwhile, and the only row
 * locks it waits for are event locks, taken in id order. Events come before endpoints and deliveries
 * in every transaction that locks more than one of them: no cycle of waits, no deadlock.
 */
export async function fanOutEvents(
  { deliveries, endpoints }: FanOutStores,
  options: { nowMicros: number; limit: number; lock: EventLock; tenantId?: string },
): Promise<number> {
  const { nowMicros } = options
  const events = await deliveries.unfannedEvents(options.limit, options.lock, options.tenantId)
  if (events.length === 0) return 0
  const subscribers = new Map<string, Awaited<ReturnType<EndpointStore['subscribers']>>>()
  const rows = []
  for (const event of events) {
    let subs = subscribers.get(event.tenant_id)
    if (!subs) {
      subs = await endpoints.subscribers(event.tenant_id)
      subscribers.set(event.tenant_id, subs)
    }
    for (const endpoint of subs.filter((s) => wants(s, event))) {
      rows.push({
        id: newId('webhookDelivery', Math.floor(nowMicros / 1000)),
        tenant_id: event.tenant_id,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        status: 'pending',
        attempts: 0,
        // Due from the event's time, so an endpoint resumed after a pause gets them in order.
        next_attempt_at: event.created_at,
        next_trigger: 'automatic',
        last_attempt_at: null,
        claimed_until: null,
        created_at: nowMicros,
        updated_at: nowMicros,
      })
    }
  }
  // Two fan-outs of one event (the dispatcher's and an endpoint change's, on PostgreSQL) make one
  // delivery per endpoint: the unique (event, endpoint) index keeps the first.
  await deliveries.insertDeliveries(rows)
  await deliveries.markFannedOut(events.map((e) => e.id))
  return events.length
}

/**
 * A disabled endpoint gets no events, except a test event an admin sends to it by name: that one is
 * held, like any delivery to a disabled endpoint, and sent on resume, rather than accepted (202) and
 * silently dropped.
 */
function wants(endpoint: { id: string; events: string; status: string }, event: EventRow): boolean {
  if (event.endpoint_id !== null) return event.endpoint_id === endpoint.id
  if (endpoint.status === 'disabled') return false
  return endpoint.events === '' || endpoint.events.split(' ').includes(event.type)
}
