import { useEffect, useState } from 'react'
import type { ConsoleUser, Page } from './api-types.js'
import { useConsole } from './console-context.js'

/** Console users' emails by id, to show people rather than ids in the audit log (empty if unavailable). */
export function useUserEmails(): ReadonlyMap<string, string> {
  const { api } = useConsole()
  const [emails, setEmails] = useState<ReadonlyMap<string, string>>(new Map())
  useEffect(() => {
    let live = true
    api
      .get<Page<ConsoleUser>>('/users', { limit: 200 })
      .then((page) => live && setEmails(new Map(page.data.map((u) => [u.id, u.email]))))
      .catch(() => undefined)
    return () => {
      live = false
    }
  }, [api])
  return emails
}
