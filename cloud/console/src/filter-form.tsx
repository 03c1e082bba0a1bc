import type { FormEvent, ReactNode } from 'react'

interface FilterFormProps {
  /** Names the form for screen readers ("Filter deliveries"). */
  label: string
  /** Applies what was typed; without it, each filter applies as it changes. */
  onSubmit?: () => void
  /** Given while a filter is set: a button that clears them all. */
  onClear?: (() => void) | undefined
  /** The filters' fields, and the button that applies them if there is one. */
  children: ReactNode
}

/** The filters above a list, in a row. */
export function FilterForm({ label, onSubmit, onClear, children }: FilterFormProps) {
  const submit = (event: FormEvent) => {
    event.preventDefault()
    onSubmit?.()
  }
  return (
    <form className="filters" aria-label={label} onSubmit={submit}>
      {children}
      {onClear ? (
        <button type="button" className="button-link" onClick={onClear}>
          Clear filters
        </button>
      ) : null}
    </form>
  )
}
