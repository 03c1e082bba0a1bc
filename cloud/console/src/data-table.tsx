import type { Key, ReactNode } from 'react'

export interface Column<T> {
  heading: string
  /** Only for screen readers (a column of buttons needs no visible heading). */
  headingHidden?: boolean
  cell: (row: T) => ReactNode
  className?: string
}

interface DataTableProps<T> {
  /** Names the table for screen readers; shown above it only when `showCaption`. */
  caption: string
  showCaption?: boolean
  columns: Column<T>[]
  rows: T[]
  rowKey: (row: T) => Key
  /** A last column of buttons for a row (revoke, remove), under a heading only screen readers get. */
  actions?: ((row: T) => ReactNode) | undefined
}

/** Rows under column headings, scrolling sideways on a narrow screen rather than squeezing. */
export function DataTable<T>({ caption, showCaption, columns, rows, rowKey, actions }: DataTableProps<T>) {
  const shown: Column<T>[] = actions
    ? [...columns, { heading: 'Actions', headingHidden: true, cell: actions }]
    : columns
  return (
    <div className="table-wrap">
      <table>
        <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
        <thead>
          <tr>
            {shown.map((c) => (
              <th key={c.heading} scope="col">
                {c.headingHidden ? <span className="visually-hidden">{c.heading}</span> : c.heading}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {shown.map((c) => (
                <td key={c.heading} className={c.className}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
