import { type ReactNode, useId } from 'react'
import { CopyButton } from './copy-button.js'

interface ShownOnceSecretProps {
  label: string
  value: string
  /** Why and where to keep it; a default says it will not be shown again. */
  children?: ReactNode
}

/**
 * A secret that the server will not show again: in a read-only field (select it, or copy it with
 * the button), with a warning never to put it in browser code.
 */
export function ShownOnceSecret({ label, value, children }: ShownOnceSecretProps) {
  const id = useId()
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input
          id={id}
          className="secret-value"
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(event) => event.currentTarget.select()}
        />
        <CopyButton value={value} />
      </div>
      <div className="warning">
        {children ?? (
          <p>
            <strong>Copy it now: it will not be shown again.</strong> Store it in your server's secret store.
          </p>
        )}
        <p>
          Never put it in browser or mobile-app code, a web page or a public repository: anyone who can read
          it can act as you. Hajri refuses it from a browser.
        </p>
      </div>
    </div>
  )
}
