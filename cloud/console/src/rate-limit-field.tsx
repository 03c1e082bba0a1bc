import { TextField } from './text-field.js'

/** How many requests a minute a key or an app may make (the server answers 429 above it). */
export function RateLimitField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <TextField
      label="Requests per minute"
      hint="More than this in a minute are refused (429) until the minute ends."
      type="number"
      required
      min={1}
      max={100000}
      step={1}
      value={value}
      onChange={onChange}
    />
  )
}
