import { useEffect, useState } from 'react'
import type { EventType } from './api-types.js'
import { useConsole } from './console-context.js'

/** The webhook event catalog, which the server publishes without a credential
 * (docs/decisions/0051-public-event-catalog.md).
 */
export function useEventCatalog(): EventType[] {
  const { api } = useConsole()
  const [catalog, setCatalog] = useState<EventType[]>([])
  useEffect(() => {
    let live = true
    api
      .getPublic<{ data: EventType[] }>('/api/public/v1/webhook-event-types')
      .then((body) => live && setCatalog(body.data))
      // Without the catalog the pickers list nothing; "every event" still works.
      .catch(() => undefined)
    return () => {
      live = false
    }
  }, [api])
  return catalog
}
