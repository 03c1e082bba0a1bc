import { useState } from 'react'
import { FormDialog } from './form-dialog.js'
import { formatDateTime } from './format.js'
import { SecretRevealDialog } from './secret-reveal-dialog.js'
import { SelectField } from './select-field.js'
import { useSubmit } from './use-submit.js'

const HOUR_SECONDS = 3600
const DAY_SECONDS = 86_400
const GRACE_CHOICES = [
  { value: '0', label: 'Stop it now' },
  { value: String(HOUR_SECONDS), label: 'For 1 hour' },
  { value: String(DAY_SECONDS), label: 'For 1 day (recommended)' },
  { value: String(7 * DAY_SECONDS), label: 'For 7 days' },
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
  const [graceSeconds, setGraceSeconds] = useState(String(DAY_SECONDS))
  const [rotated, setRotated] = useState<RotatedSecret>()
  const submission = useSubmit(async () => setRotated(await onRotate(Number(graceSeconds))))

  if (rotated) {
    return (
      <SecretRevealDialog
        title="New secret"
        secretLabel={secretLabel}
        secret={rotated.secret}
        advice={
          <p>
            <strong>Copy it now: it will not be shown again.</strong> Put it where the old one is used.
            {rotated.previousSecretsExpireAt
              ? ` The old secret keeps working until ${formatDateTime(rotated.previousSecretsExpireAt)}.`
              : ''}
          </p>
        }
        onClose={onClose}
      />
    )
  }

  return (
    <FormDialog
      title="Rotate the secret"
      onClose={onClose}
      submission={submission}
      submitLabel="Rotate secret"
      busyLabel="Rotating…"
      intro={
        <p>
          A new secret is made for {what}. Systems that use the old one must be given the new one before the
          old one stops working.
        </p>
      }
    >
      <SelectField
        label="Keep the old secret working"
        value={graceSeconds}
        onChange={setGraceSeconds}
        choices={GRACE_CHOICES}
        data-initial-focus
      />
    </FormDialog>
  )
}
