import type { PagedList } from './use-paged-list.js'

/** The next page of a list, when there is one. */
export function LoadMoreButton({ list }: { list: PagedList<unknown> }) {
  if (!list.hasMore) return null
  return (
    <p>
      <button type="button" onClick={list.loadMore} disabled={list.loading}>
        {list.loading ? 'Loading…' : 'Show more'}
      </button>
    </p>
  )
}
