import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import { Dialog } from './dialog.js'
import { Field } from './field.js'
import { formatDateTime } from './format.js'
import { Notice } from './notice.js'
import { ShownOnceSecret } from './shown-once-secret.js'

const GRACE_CHOICES = [
  { seconds: 0, label: 'Stop it now' },
  { seconds: 3600, label: 'For 1 hour' },
  { seconds: 86_400, label: 'For 1 day (recommended)' },
  { seconds: 7 * 86_400, label: 'For 7 days' },
]

export interface RotatedSecret {
  secret: string
  previousSecretsExpireAt?: string
}

interface RotateSecretDialogProps {
  /** "the OAuth app Payroll sync". */
  what: string
  secretLabel: string
  onRotate: (graceSeconds: number) => Promise<RotatedSecret>
  onClose: () => void
}

/** Asks how long the old secret keeps working, rotates, and shows the new secret once. */
export function RotateSecretDialog({ what, secretLabel, onRotate, onClose }: RotateSecretDialogProps) {
  const [grace, setGrace] = useState(86_400)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [rotated, setRotated] = useState<RotatedSecret>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      setRotated(await onRotate(grace))
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }

  if (rotated) {
    return (
      <Dialog title="New secret" onClose={onClose}>
        <ShownOnceSecret label={secretLabel} value={rotated.secret}>
          <p>
            <strong>Copy it now: it will not be shown again.</strong> Put it where the old one is used.
            {rotated.previousSecretsExpireAt
              ? ` The old secret keeps working until ${formatDateTime(rotated.previousSecretsExpireAt)}.`
              : ''}
          </p>
        </ShownOnceSecret>
        <div className="dialog-actions">
          <button type="button" className="button-primary" onClick={onClose} data-initial-focus>
            Done
          </button>
        </div>
      </Dialog>
    )
  }

  return (
    <Dialog title="Rotate the secret" onClose={onClose}>
      <form onSubmit={submit}>
        <p>
          A new secret is made for {what}. Systems that use the old one must be given the new one before the
          old one stops working.
        </p>
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Field label="Keep the old secret working">
          <select value={grace} onChange={(e) => setGrace(Number(e.target.value))} data-initial-focus>
            {GRACE_CHOICES.map((c) => (
              <option key={c.seconds} value={c.seconds}>
                {c.label}
              </option>
            ))}
          </select>
        </Field>
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button-primary" disabled={busy}>
            {busy ? 'Rotating…' : 'Rotate secret'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
