import type { ReactNode } from 'react'
import { ErrorNotice } from './error-notice.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import type { PagedList } from './use-paged-list.js'

interface PagedItemsProps<T> {
  list: PagedList<T>
  /** Shown once the first page is in and holds nothing: what that means, what to do (an EmptyState). */
  empty: ReactNode
  /** The items loaded so far, never none. */
  children: (items: T[]) => ReactNode
}

/** A paged list in each of its states: failed, loading, empty, or its items with a way to the next page. */
export function PagedItems<T>({ list, empty, children }: PagedItemsProps<T>) {
  return (
    <>
      <ErrorNotice error={list.error} />
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? empty : null}
      {list.items.length > 0 ? children(list.items) : null}
      <LoadMoreButton list={list} />
    </>
  )
}
