import type { PagedList } from './use-paged-list.js'

/** Loads a list again from its first page: for logs, which grow while they are read. */
export function RefreshButton({ list }: { list: PagedList<unknown> }) {
  return (
    <button type="button" onClick={list.reload}>
      Refresh
    </button>
  )
}
