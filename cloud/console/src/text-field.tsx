import type { InputHTMLAttributes } from 'react'
import { type BoundFieldProps, Field } from './field.js'

type InputAttributes = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'>

type TextFieldProps = InputAttributes & BoundFieldProps

/** A labelled text input (any `type` whose value is text: email, password, url, number, datetime-local). */
export function TextField({ label, hint, value, onChange, ...input }: TextFieldProps) {
  return (
    <Field label={label} hint={hint}>
      <input {...input} value={value} onChange={(e) => onChange(e.target.value)} />
    </Field>
  )
}
