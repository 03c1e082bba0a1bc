import type { ReactNode } from 'react'

/** What an empty list means, and what to do about it. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty-state">
      <p className="empty-title">{title}</p>
      {children ? <div>{children}</div> : null}
    </div>
  )
}
