import type { ReactNode } from 'react'
import { Dialog } from './dialog.js'
import { ErrorNotice } from './error-notice.js'
import { SubmitButton } from './submit-button.js'
import type { Submission } from './use-submit.js'

/** What a dialog built on FormDialog is given by its page, and hands on as it is. */
export interface FormDialogTexts {
  title: string
  submitLabel: string
  /** Escape, the close button or Cancel. */
  onClose: () => void
}

interface FormDialogProps extends FormDialogTexts {
  /** From useSubmit: sends the form, and says it is busy or why it failed. */
  submission: Submission
  /** While it is sent ("Creating…"). */
  busyLabel: string
  /** Above the form's error: what the form does. */
  intro?: ReactNode
  wide?: boolean
  children: ReactNode
}

/** A form in a dialog: its error above the fields, then Cancel and the submit button. */
export function FormDialog({
  title,
  onClose,
  submission,
  submitLabel,
  busyLabel,
  intro,
  wide,
  children,
}: FormDialogProps) {
  return (
    <Dialog title={title} onClose={onClose} wide={wide}>
      <form onSubmit={submission.submit}>
        {intro}
        <ErrorNotice error={submission.error} />
        {children}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <SubmitButton busy={submission.busy} label={submitLabel} busyLabel={busyLabel} />
        </div>
      </form>
    </Dialog>
  )
}
