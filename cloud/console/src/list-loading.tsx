import type { PagedList } from './use-paged-list.js'

/** Until a list's first page is in (or has failed): says so, and marks the page busy. */
export function ListLoading({ list }: { list: PagedList<unknown> }) {
  if (list.loaded || list.error) return null
  return (
    <p aria-busy="true" className="muted">
      Loading…
    </p>
  )
}
