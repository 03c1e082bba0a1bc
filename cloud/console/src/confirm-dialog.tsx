import type { ReactNode } from 'react'
import { Dialog } from './dialog.js'
import { ErrorNotice } from './error-notice.js'
import { useSubmit } from './use-submit.js'

interface ConfirmDialogProps {
  title: string
  children: ReactNode
  /** The button that does it: says what it does ("Revoke key"), never just "OK". */
  confirmLabel: string
  danger?: boolean
  /** Does it; the dialog stays open with the error if it fails. */
  onConfirm: () => Promise<void>
  onClose: () => void
}

/** Asks before something that cannot be undone; Cancel has the focus, so Enter does no harm. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger,
  onConfirm,
  onClose,
}: ConfirmDialogProps) {
  const { busy, error, submit } = useSubmit(async () => {
    await onConfirm()
    onClose()
  })

  return (
    <Dialog title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      <ErrorNotice error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose} data-initial-focus>
          Cancel
        </button>
        <button
          type="button"
          className={danger ? 'button-danger' : 'button-primary'}
          onClick={() => void submit()}
          disabled={busy}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Dialog>
  )
}
