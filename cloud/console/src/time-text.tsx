import { formatDateTime, formatRelative } from './format.js'

/** A server time for people: the date and time, with how long ago (or until) it is. */
export function TimeText({ value, empty = 'Never' }: { value: string | null | undefined; empty?: string }) {
  if (!value) return <span className="muted">{empty}</span>
  return (
    <time dateTime={value} title={value}>
      {formatDateTime(value)} <span className="muted">({formatRelative(value)})</span>
    </time>
  )
}
