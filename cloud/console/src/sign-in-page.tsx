import { type FormEvent, useState } from 'react'
import { type ApiClient, errorMessage } from './api-client.js'
import type { Session } from './api-types.js'
import { Field } from './field.js'
import { Notice } from './notice.js'

interface SignInPageProps {
  api: ApiClient
  /** Why the person is here: signed out, or the session ended. */
  notice: string | undefined
  onSignedIn: (session: Session) => void
}

/** Email and password (POST /session); the server sets the session cookie. */
export function SignInPage({ api, notice, onSignedIn }: SignInPageProps) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      onSignedIn(await api.post<Session>('/session', { email: email.trim(), password }))
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <main className="centered" id="main">
      <form className="card sign-in" onSubmit={submit}>
        <h1>Sign in to Hajri</h1>
        {notice && !error ? <Notice kind="info">{notice}</Notice> : null}
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Field label="Email">
          <input
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </Field>
        <Field
          label="Password"
          hint="The first time, use the one-time password you were given; you will then choose your own."
        >
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </Field>
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint">
          No account? An owner or admin of your organisation can invite you. Forgotten your password? Ask them
          to remove and invite you again.
        </p>
      </form>
    </main>
  )
}
