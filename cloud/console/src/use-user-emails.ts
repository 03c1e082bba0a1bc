import type { ApiClient } from './api-client.js'
import type { ConsoleUser, Page } from './api-types.js'
import { useLoaded } from './use-loaded.js'

const NO_EMAILS: ReadonlyMap<string, string> = new Map()

const loadEmails = async (api: ApiClient): Promise<ReadonlyMap<string, string>> => {
  const page = await api.get<Page<ConsoleUser>>('/users', { limit: 200 })
  return new Map(page.data.map((u) => [u.id, u.email]))
}

/** Console users' emails by id, to show people rather than ids in the audit log (empty if unavailable). */
export function useUserEmails(): ReadonlyMap<string, string> {
  return useLoaded(loadEmails).data ?? NO_EMAILS
}
