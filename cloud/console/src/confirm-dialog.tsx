import { type ReactNode, useState } from 'react'
import { errorMessage } from './api-client.js'
import { Dialog } from './dialog.js'
import { Notice } from './notice.js'

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
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const confirm = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
      onClose()
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <Dialog title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      {error ? <Notice kind="error">{error}</Notice> : null}
      <div className="dialog-actions">
        <button type="button" onClick={onClose} data-initial-focus>
          Cancel
        </button>
        <button
          type="button"
          className={danger ? 'button-danger' : 'button-primary'}
          onClick={confirm}
          disabled={busy}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Dialog>
  )
}
