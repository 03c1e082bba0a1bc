import type { Binding } from './field.js'
import { TextField } from './text-field.js'

/** From and Until, in the reader's time zone ("2026-11-21T09:00", '' for no limit), to narrow a list. */
export function PeriodFields({ from, to }: { from: Binding; to: Binding }) {
  return (
    <>
      <TextField label="From" type="datetime-local" {...from} />
      <TextField label="Until" type="datetime-local" {...to} />
    </>
  )
}
