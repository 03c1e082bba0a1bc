import type { Key, ReactNode } from 'react'
import { useConsole } from './console-context.js'
import { type Column, DataTable } from './data-table.js'
import { PagedItems } from './paged-items.js'
import type { PagedList } from './use-paged-list.js'

interface PagedTableProps<T> {
  list: PagedList<T>
  empty: ReactNode
  caption: string
  columns: Column<T>[]
  rowKey: (row: T) => Key
  /** Buttons that change a row's item (revoke, remove): shown to owners and admins only. */
  actions?: (row: T) => ReactNode
}

/** A paged list as a table (see PagedItems for its loading, error and empty states). */
export function PagedTable<T>({ list, empty, caption, columns, rowKey, actions }: PagedTableProps<T>) {
  const { canWrite } = useConsole()
  return (
    <PagedItems list={list} empty={empty}>
      {(rows) => (
        <DataTable
          caption={caption}
          columns={columns}
          rows={rows}
          rowKey={rowKey}
          actions={canWrite ? actions : undefined}
        />
      )}
    </PagedItems>
  )
}
