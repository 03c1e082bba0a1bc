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
  const [tenantId, setTenantId] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const tenant = tenantId.trim()
      onSignedIn(
        await api.post<Session>('/session', {
          email: email.trim(),
          password,
          ...(tenant ? { tenantId: tenant } : {}),
        }),
      )
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
        <details className="sign-in-tenant">
          <summary>Several organisations with one password?</summary>
          <Field
            label="Organisation id (optional)"
            hint="Your password chooses the organisation. If you use the same password in several, enter the id (ten_…) of the one to open; it is shown beside its name once you are signed in."
          >
            <input
              autoComplete="off"
              spellCheck={false}
              pattern="ten_[0-9A-HJKMNP-TV-Z]{26}"
              value={tenantId}
              onChange={(e) => setTenantId(e.target.value)}
            />
          </Field>
        </details>
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
