import { type ReactNode, useId } from 'react'
import { PageAction } from './page-action.js'

interface AttendanceSectionProps {
  title: string
  lead: ReactNode
  /** The section's add button (owners and admins only). */
  addLabel?: string
  onAdd?: () => void
  children: ReactNode
}

/** One part of the attendance settings: its heading and add button, what it is for, its list. */
export function AttendanceSection({ title, lead, addLabel, onAdd, children }: AttendanceSectionProps) {
  const id = useId()
  return (
    <section className="attendance-section" aria-labelledby={id}>
      <div className="page-header">
        <h2 id={id}>{title}</h2>
        {addLabel && onAdd ? <PageAction label={addLabel} onClick={onAdd} /> : null}
      </div>
      <p className="lead">{lead}</p>
      {children}
    </section>
  )
}
