import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'

export interface Submission {
  /** True while the action runs: the submit button is disabled and says so. */
  busy: boolean
  /** What went wrong, for a person; cleared when the next submission starts. */
  error: string | undefined
  /** A form's onSubmit (the page does not reload), or a button's onClick. */
  submit: (event?: FormEvent) => Promise<void>
}

/**
 * Runs a form's action once at a time: `check` goes first (it may reset what the last submission
 * showed) and a message it returns stops the submission; a failed action leaves its error to show.
 */
export function useSubmit(action: () => Promise<void>, check?: () => string | undefined): Submission {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event?: FormEvent) => {
    event?.preventDefault()
    const problem = check?.()
    setError(problem)
    if (problem !== undefined) return
    setBusy(true)
    try {
      await action()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }

  return { busy, error, submit }
}
