import { cloneElement, type ReactElement, type ReactNode, useId } from 'react'

interface FieldProps {
  label: string
  /** One control; it gets the id the label points at, and the hint as its description. */
  children: ReactElement<{ id?: string; 'aria-describedby'?: string }>
  hint?: ReactNode
}

/** A labelled form control with an optional hint, linked for screen readers. */
export function Field({ label, children, hint }: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': hint ? hintId : undefined })}
      {hint ? (
        <p id={hintId} className="hint">
          {hint}
        </p>
      ) : null}
    </div>
  )
}
