import type { ReactNode } from 'react'
import { Dialog } from './dialog.js'
import { ShownOnceSecret } from './shown-once-secret.js'

interface SecretRevealDialogProps {
  title: string
  /** Names the secret's field ("Client secret"). */
  secretLabel: string
  secret: string
  /** Above the secret: what it belongs to. */
  intro?: ReactNode
  /** Replaces ShownOnceSecret's default advice on keeping it. */
  advice?: ReactNode
  /** Below the secret: how to use it. */
  children?: ReactNode
  /** The only way on ("I have stored the key"); it has the focus. */
  doneLabel?: string
  onClose: () => void
}

/** A secret just made or shown, in a dialog of its own that is left by saying it has been stored. */
export function SecretRevealDialog({
  title,
  secretLabel,
  secret,
  intro,
  advice,
  children,
  doneLabel = 'Done',
  onClose,
}: SecretRevealDialogProps) {
  return (
    <Dialog title={title} onClose={onClose}>
      {intro}
      <ShownOnceSecret label={secretLabel} value={secret}>
        {advice}
      </ShownOnceSecret>
      {children}
      <div className="dialog-actions">
        <button type="button" className="button-primary" onClick={onClose} data-initial-focus>
          {doneLabel}
        </button>
      </div>
    </Dialog>
  )
}
