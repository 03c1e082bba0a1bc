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

/** A Field around a control whose value is text, held by the page: what TextField and SelectField take. */
export interface BoundFieldProps {
  label: string
  hint?: ReactNode
  value: string
  onChange: (value: string) => void
  /** Gets the focus when its dialog opens. */
  'data-initial-focus'?: boolean
}

/** A text value and its setter, to spread into a TextField or SelectField. */
export type Binding = Pick<BoundFieldProps, 'value' | 'onChange'>
