import { useCallback, useEffect, useState } from 'react'
import { type ApiClient, type ApiError, errorMessage } from './api-client.js'
import type { Session } from './api-types.js'
import { ChangePasswordPage } from './change-password-page.js'
import { ConsoleContext } from './console-context.js'
import { Notice } from './notice.js'
import { Shell } from './shell.js'
import { SignInPage } from './sign-in-page.js'

type State =
  | { kind: 'loading' }
  | { kind: 'unreachable'; message: string }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'signed-in'; session: Session }

/** The console: whoever is signed in (GET /session), then the sign-in page, a forced password change, or the pages. */
export function App({ api }: { api: ApiClient }) {
  const [state, setState] = useState<State>({ kind: 'loading' })

  const signedIn = useCallback(
    (session: Session) => {
      api.setCsrfToken(session.csrfToken)
      setState({ kind: 'signed-in', session })
    },
    [api],
  )

  const signedOut = useCallback(
    (notice?: string) => {
      api.setCsrfToken(undefined)
      setState({ kind: 'signed-out', notice })
    },
    [api],
  )

  const load = useCallback(async () => {
    setState({ kind: 'loading' })
    try {
      signedIn(await api.get<Session>('/session'))
    } catch (err) {
      if ((err as ApiError).status === 401) signedOut()
      else setState({ kind: 'unreachable', message: errorMessage(err) })
    }
  }, [api, signedIn, signedOut])

  useEffect(() => {
    void load()
  }, [load])

  /** After a password change the server may have renewed the session and its CSRF token. */
  const refresh = async () => {
    try {
      signedIn(await api.get<Session>('/session'))
    } catch (err) {
      signedOut(errorMessage(err))
    }
  }

  useEffect(() => {
    api.onSessionEnded = () => signedOut('Your session has ended. Sign in again to continue.')
    return () => {
      api.onSessionEnded = undefined
    }
  }, [api, signedOut])

  const signOut = async () => {
    try {
      await api.delete('/session')
    } catch {
      // Already over (expired, or ended elsewhere): signed out all the same.
    }
    signedOut('You have signed out.')
  }

  switch (state.kind) {
    case 'loading':
      return (
        <main className="centered" aria-busy="true">
          <p>Loading the Hajri console…</p>
        </main>
      )
    case 'unreachable':
      return (
        <main className="centered">
          <h1>The console cannot start</h1>
          <Notice kind="error">{state.message}</Notice>
          <button type="button" className="button-primary" onClick={() => void load()}>
            Try again
          </button>
        </main>
      )
    case 'signed-out':
      return <SignInPage api={api} notice={state.notice} onSignedIn={signedIn} />
    case 'signed-in': {
      const { user } = state.session
      const context = { api, user, tenant: state.session.tenant, canWrite: user.role !== 'viewer' }
      return (
        <ConsoleContext.Provider value={context}>
          {user.mustChangePassword ? (
            <main className="centered" id="main">
              <ChangePasswordPage forced onChanged={() => void refresh()} />
              <p>
                <button type="button" className="button-link" onClick={() => void signOut()}>
                  Sign out
                </button>
              </p>
            </main>
          ) : (
            <Shell onSignOut={signOut} />
          )}
        </ConsoleContext.Provider>
      )
    }
  }
}
