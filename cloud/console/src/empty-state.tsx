import type { ReactNode } from 'react'
import { useConsole } from './console-context.js'

interface EmptyStateProps {
  title: string
  /** What to do about it. */
  children?: ReactNode
  /** Instead of `children` for a viewer, who cannot do it ("An owner or admin can create one."). */
  forViewers?: string
}

/** What an empty list means, and what to do about it. */
export function EmptyState({ title, children, forViewers }: EmptyStateProps) {
  const { canWrite } = useConsole()
  const advice = forViewers !== undefined && !canWrite ? forViewers : children
  return (
    <div className="empty-state">
      <p className="empty-title">{title}</p>
      {advice ? <div>{advice}</div> : null}
    </div>
  )
}
