import { useState } from 'react'
import type { ApiClient } from './api-client.js'
import type { Session } from './api-types.js'
import { ErrorNotice } from './error-notice.js'
import { Notice } from './notice.js'
import { SubmitButton } from './submit-button.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

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
  const { busy, error, submit } = useSubmit(async () => {
    const tenant = tenantId.trim()
    onSignedIn(
      await api.post<Session>('/session', {
        email: email.trim(),
        password,
        ...(tenant ? { tenantId: tenant } : {}),
      }),
    )
  })

  return (
    <main className="centered" id="main">
      <form className="card sign-in" onSubmit={submit}>
        <h1>Sign in to Hajri</h1>
        {notice && !error ? <Notice kind="info">{notice}</Notice> : null}
        <ErrorNotice error={error} />
        <TextField
          label="Email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={setEmail}
        />
        <TextField
          label="Password"
          hint="The first time, use the one-time password you were given; you will then choose your own."
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={setPassword}
        />
        <details className="sign-in-tenant">
          <summary>Several organisations with one password?</summary>
          <TextField
            label="Organisation id (optional)"
            hint="Your password chooses the organisation. If you use the same password in several, enter the id (ten_…) of the one to open; it is shown beside its name once you are signed in."
            autoComplete="off"
            spellCheck={false}
            pattern="ten_[0-9A-HJKMNP-TV-Z]{26}"
            value={tenantId}
            onChange={setTenantId}
          />
        </details>
        <SubmitButton busy={busy} label="Sign in" busyLabel="Signing in…" />
        <p className="hint">
          No account? An owner or admin of your organisation can invite you. Forgotten your password? Ask them
          to remove and invite you again.
        </p>
      </form>
    </main>
  )
}
