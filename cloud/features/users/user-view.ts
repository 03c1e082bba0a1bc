import type { ConsoleRole, ConsoleUser } from '../../../shared/console-auth.js'
import { formatServerTime } from '../../../shared/time.js'

/** The columns of a console user that its API shape is made from. */
export interface ConsoleUserFields {
  id: string
  email: string
  role: string
  must_change_password: number
  created_at: number
  last_sign_in_at: number | null
}

export function consoleUserView(row: ConsoleUserFields): ConsoleUser {
  return {
    id: row.id,
    email: row.email,
    role: row.role as ConsoleRole,
    mustChangePassword: row.must_change_password === 1,
    createdAt: formatServerTime(row.created_at),
    lastSignInAt: row.last_sign_in_at === null ? null : formatServerTime(row.last_sign_in_at),
  }
}

/** Emails are compared as typed, less surrounding spaces and case (as `tenant create` stores them). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}
