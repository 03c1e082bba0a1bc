import { type ReactNode, useEffect, useId, useRef } from 'react'

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])'

interface DialogProps {
  title: string
  /** Escape, or the close button: the parent unmounts the dialog. */
  onClose: () => void
  children: ReactNode
  wide?: boolean
}

/**
 * A modal dialog on the native <dialog>: showModal() makes the rest of the page inert, Tab cycles
 * through the dialog's controls, and Escape cancels. Mounted means open; on unmount focus returns to what opened it. The
 * first control marked `data-initial-focus` gets focus, else the first one.
 */
export function Dialog({ title, onClose, children, wide }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const close = useRef(onClose)
  close.current = onClose

  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    dialog.showModal()
    dialog.querySelector<HTMLElement>('[data-initial-focus]')?.focus()
    const cancel = (event: Event) => {
      event.preventDefault()
      close.current()
    }
    // Tab from the last control comes back to the first (and Shift+Tab the other way), rather than
    // leaving for the browser's own toolbar.
    const wrap = (event: KeyboardEvent) => {
      if (event.key !== 'Tab') return
      const controls = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
        (c) => !c.matches(':disabled'),
      )
      const first = controls[0]
      const last = controls[controls.length - 1]
      if (!first || !last) return
      if (!event.shiftKey && document.activeElement === last) {
        event.preventDefault()
        first.focus()
      } else if (event.shiftKey && document.activeElement === first) {
        event.preventDefault()
        last.focus()
      }
    }
    // Chromium may close a dialog without a cancelable `cancel` (Escape pressed twice quickly).
    const closed = () => close.current()
    dialog.addEventListener('cancel', cancel)
    dialog.addEventListener('close', closed)
    dialog.addEventListener('keydown', wrap)
    return () => {
      dialog.removeEventListener('cancel', cancel)
      dialog.removeEventListener('close', closed)
      dialog.removeEventListener('keydown', wrap)
      dialog.close()
      if (opener?.isConnected) opener.focus()
      else document.querySelector<HTMLElement>('main h1')?.focus()
    }
  }, [])

  return (
    <dialog ref={ref} aria-labelledby={titleId} className={wide ? 'dialog dialog-wide' : 'dialog'}>
      <div className="dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="button-quiet" onClick={() => close.current()} aria-label="Close">
          ×
        </button>
      </div>
      {children}
    </dialog>
  )
}
