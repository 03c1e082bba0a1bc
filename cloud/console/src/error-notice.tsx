import { Notice } from './notice.js'

/** An error for a person, when there is one (an alert, read out at once). */
export function ErrorNotice({ error }: { error: string | undefined }) {
  return error ? <Notice kind="error">{error}</Notice> : null
}
