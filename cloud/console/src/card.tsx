import type { ReactNode } from 'react'
import { StatusBadge } from './status-badge.js'

interface CardProps {
  title: string
  /** "url" for a title that is an address, so that it wraps anywhere. */
  titleClassName?: string
  status: string
  statusLabel: string
  /** What there is to know about the item (warnings, a list of facts). */
  children: ReactNode
  /** Buttons and links that act on it. */
  actions: ReactNode
}

/** One item of a list of cards (an app, an endpoint): its name and status, its facts, what to do with it. */
export function Card({ title, titleClassName, status, statusLabel, children, actions }: CardProps) {
  return (
    <li className="card">
      <div className="card-title">
        <h2 className={titleClassName}>{title}</h2>
        <StatusBadge status={status} label={statusLabel} />
      </div>
      {children}
      <div className="actions">{actions}</div>
    </li>
  )
}
