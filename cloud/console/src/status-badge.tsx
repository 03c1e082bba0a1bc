/** A status word with a colour that only repeats what the word says. */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span className={`badge badge-${status}`}>{label ?? status}</span>
}
