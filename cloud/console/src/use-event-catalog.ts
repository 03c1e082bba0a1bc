import type { ApiClient } from './api-client.js'
import type { EventType } from './api-types.js'
import { useLoaded } from './use-loaded.js'

const NO_EVENTS: EventType[] = []

const loadCatalog = async (api: ApiClient) =>
  (await api.getPublic<{ data: EventType[] }>('/api/public/v1/webhook-event-types')).data

/** The webhook event catalog, which the server publishes without a credential
 * (docs/decisions/0051-public-event-catalog.md).
 */
export function useEventCatalog(): EventType[] {
  // Without the catalog the pickers list nothing; "every event" still works.
  return useLoaded(loadCatalog).data ?? NO_EVENTS
}
