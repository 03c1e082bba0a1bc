import type { SelectHTMLAttributes } from 'react'
import { type BoundFieldProps, Field } from './field.js'

export interface Choice {
  value: string
  label: string
}

type SelectAttributes = Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id' | 'value' | 'onChange'>

interface SelectFieldProps extends SelectAttributes, BoundFieldProps {
  /** In order; a first choice with the value '' stands for "any" in a filter. */
  choices: Choice[]
}

/** A labelled drop-down list of choices. */
export function SelectField({ label, hint, value, onChange, choices, ...select }: SelectFieldProps) {
  return (
    <Field label={label} hint={hint}>
      <select {...select} value={value} onChange={(e) => onChange(e.target.value)}>
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </Field>
  )
}
