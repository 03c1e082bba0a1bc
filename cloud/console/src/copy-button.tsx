import { useState } from 'react'

/** Copies a value to the clipboard and says so; if the browser refuses, says how to copy by hand. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setState('copied')
    } catch {
      setState('failed')
    }
  }
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied'
          ? 'Copied.'
          : state === 'failed'
            ? 'Select the text and press Ctrl+C to copy.'
            : ''}
      </span>
    </>
  )
}
