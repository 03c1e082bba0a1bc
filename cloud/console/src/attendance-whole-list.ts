import type { PagedList } from './use-paged-list.js'
import { usePagedList } from './use-paged-list.js'

/**
 * A list the API answers whole (`{data}`, no `nextCursor`: shifts, policies, assignments, holidays), as a
 * PagedList, so that PagedTable shows it with its loading, error and empty states.
 */
export function useWholeList<T>(path: string): PagedList<T> {
  const list = usePagedList<T>(path)
  return { ...list, hasMore: false, loadMore: () => undefined }
}
