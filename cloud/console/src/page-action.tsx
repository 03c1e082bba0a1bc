import { useConsole } from './console-context.js'

/** A page's main button ("Create API key"), for owners and admins only: viewers change nothing. */
export function PageAction({ label, onClick }: { label: string; onClick: () => void }) {
  const { canWrite } = useConsole()
  if (!canWrite) return null
  return (
    <button type="button" className="button-primary" onClick={onClick}>
      {label}
    </button>
  )
}
