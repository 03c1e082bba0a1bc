import { useEffect, useState } from 'react'
import { type ApiClient, errorMessage } from './api-client.js'
import { useConsole } from './console-context.js'

export interface Loaded<T> {
  /** Undefined until it is in (and for good when it failed). */
  data: T | undefined
  error: string | undefined
}

/**
 * What a page or dialog shows, fetched once when it opens. `load` must keep its identity between
 * renders (declared outside the component, or in useCallback with what it depends on): each new
 * one loads again. An answer that arrives after the component is gone, or after a newer `load`, is
 * dropped.
 */
export function useLoaded<T>(load: (api: ApiClient) => Promise<T>): Loaded<T> {
  const { api } = useConsole()
  const [loaded, setLoaded] = useState<Loaded<T>>({ data: undefined, error: undefined })
  useEffect(() => {
    let live = true
    load(api).then(
      (data) => live && setLoaded({ data, error: undefined }),
      (err: unknown) => live && setLoaded({ data: undefined, error: errorMessage(err) }),
    )
    return () => {
      live = false
    }
  }, [api, load])
  return loaded
}
