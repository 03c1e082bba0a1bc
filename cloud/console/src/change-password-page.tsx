import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import { useConsole } from './console-context.js'
import { Field } from './field.js'
import { Notice } from './notice.js'

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
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [done, setDone] = useState(false)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setError(undefined)
    setDone(false)
    if (next !== again) {
      setError('The two new passwords are not the same. Type the new password again in both fields.')
      return
    }
    if (next === current) {
      setError('The new password must be different from the current one.')
      return
    }
    setBusy(true)
    try {
      await api.post('/session/password', { currentPassword: current, newPassword: next })
      setCurrent('')
      setNext('')
      setAgain('')
      setDone(true)
      onChanged?.()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form className="card narrow" onSubmit={submit}>
      <h1 tabIndex={-1}>{forced ? 'Choose your password' : 'Change your password'}</h1>
      {forced ? (
        <p>
          You signed in as <strong>{user.email}</strong> with a one-time password. Choose your own password to
          continue.
        </p>
      ) : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {done ? <Notice kind="success">Your password has been changed.</Notice> : null}
      <Field label={forced ? 'One-time password' : 'Current password'}>
        <input
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
        />
      </Field>
      <Field label="New password" hint="At least 12 characters. A few unrelated words make a strong one.">
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
      </Field>
      <Field label="New password again">
        <input
          type="password"
          autoComplete="new-password"
          required
          value={again}
          onChange={(e) => setAgain(e.target.value)}
        />
      </Field>
      <button type="submit" className="button-primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save new password'}
      </button>
    </form>
  )
}
