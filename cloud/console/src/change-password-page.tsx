import { useState } from 'react'
import { useConsole } from './console-context.js'
import { ErrorNotice } from './error-notice.js'
import { Notice } from './notice.js'
import { SubmitButton } from './submit-button.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

interface ChangePasswordPageProps {
  /** After a one-time password: nothing else is open until a new password is chosen. */
  forced?: boolean
  onChanged?: () => void
}

/** POST /session/password: the current password, and a new one typed twice. */
export function ChangePasswordPage({ forced, onChanged }: ChangePasswordPageProps) {
  const { api, user } = useConsole()
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [done, setDone] = useState(false)

  const { busy, error, submit } = useSubmit(
    async () => {
      await api.post('/session/password', { currentPassword: current, newPassword: next })
      setCurrent('')
      setNext('')
      setAgain('')
      setDone(true)
      onChanged?.()
    },
    () => {
      setDone(false)
      if (next !== again)
        return 'The two new passwords are not the same. Type the new password again in both fields.'
      if (next === current) return 'The new password must be different from the current one.'
      return undefined
    },
  )

  return (
    <form className="card narrow" onSubmit={submit}>
      <h1 tabIndex={-1}>{forced ? 'Choose your password' : 'Change your password'}</h1>
      {forced ? (
        <p>
          You signed in as <strong>{user.email}</strong> with a one-time password. Choose your own password to
          continue.
        </p>
      ) : null}
      <ErrorNotice error={error} />
      {done ? <Notice kind="success">Your password has been changed.</Notice> : null}
      <TextField
        label={forced ? 'One-time password' : 'Current password'}
        type="password"
        autoComplete="current-password"
        required
        value={current}
        onChange={setCurrent}
      />
      <TextField
        label="New password"
        hint="At least 12 characters. A few unrelated words make a strong one."
        type="password"
        autoComplete="new-password"
        required
        minLength={12}
        value={next}
        onChange={setNext}
      />
      <TextField
        label="New password again"
        type="password"
        autoComplete="new-password"
        required
        value={again}
        onChange={setAgain}
      />
      <SubmitButton busy={busy} label="Save new password" busyLabel="Saving…" />
    </form>
  )
}
