import { useCallback, useEffect, useRef, useState } from 'react'
import { errorMessage, type Query } from './api-client.js'
import type { Page } from './api-types.js'
import { useConsole } from './console-context.js'

export interface PagedList<T> {
  items: T[]
  /** False until the first page is in. */
  loaded: boolean
  loading: boolean
  error: string | undefined
  hasMore: boolean
  loadMore: () => void
  reload: () => void
}

/**
 * A list from the console API, a page at a time (`{data, nextCursor}`,
 * docs/development/architecture.md#paging). It starts again whenever the path or query changes; only the
 * latest request's answer is kept.
 */
export function usePagedList<T>(path: string, query: Query = {}): PagedList<T> {
  const { api } = useConsole()
  const [items, setItems] = useState<T[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [loaded, setLoaded] = useState(false)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<string>()
  const latest = useRef(0)
  // The query object is new on every render; its text changes only when a filter does.
  const queryText = JSON.stringify(query)

  const fetchPage = useCallback(
    async (after: string | null) => {
      const request = ++latest.current
      setLoading(true)
      setError(undefined)
      try {
        const page = await api.get<Page<T>>(path, {
          ...JSON.parse(queryText),
          ...(after ? { cursor: after } : {}),
        })
        if (request !== latest.current) return
        setItems((previous) => (after ? [...previous, ...page.data] : page.data))
        setCursor(page.nextCursor)
        setLoaded(true)
      } catch (err) {
        if (request === latest.current) setError(errorMessage(err))
      } finally {
        if (request === latest.current) setLoading(false)
      }
    },
    [api, path, queryText],
  )

  useEffect(() => {
    void fetchPage(null)
  }, [fetchPage])

  return {
    items,
    loaded,
    loading,
    error,
    hasMore: cursor !== null,
    loadMore: () => void fetchPage(cursor),
    reload: () => void fetchPage(null),
  }
}
