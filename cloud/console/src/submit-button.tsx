/** A form's submit button: disabled while the form is sent, and saying what it is doing ("Saving…"). */
export function SubmitButton({
  busy,
  label,
  busyLabel,
}: {
  busy: boolean
  label: string
  busyLabel: string
}) {
  return (
    <button type="submit" className="button-primary" disabled={busy}>
      {busy ? busyLabel : label}
    </button>
  )
}
