import { type Static, Type } from '@sinclair/typebox'
import { idPattern } from './ids.js'
import { PageQueryFields, PageSchema } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'

/**
 * Console users and their sessions: sign-in, sign-out, password change, and the owners
 * and admins who invite and remove the others. Under /api/console/v1.
 */

/** `owner`: everything, including owners; `admin`: everything but owners; `viewer`: reads only. */
export const CONSOLE_ROLES = ['owner', 'admin', 'viewer'] as const
export type ConsoleRole = (typeof CONSOLE_ROLES)[number]

/** NIST SP 800-63B §3.1.1.2: length is what makes a password strong; no composition rules. */
export const MIN_PASSWORD_LENGTH = 12
/** Long passphrases are welcome; the cap only keeps a request from costing scrypt megabytes. */
const MAX_PASSWORD_LENGTH = 256

// One shape for sign-in and invitation, so that a user can always type the address they were given.
// Control characters are refused (PostgreSQL refuses NUL; they are never part of an address).
const EMAIL_PATTERN =
  '^[^\\s@\\u0000-\\u001F\\u007F]+@[^\\s@\\u0000-\\u001F\\u007F]+\\.[^\\s@\\u0000-\\u001F\\u007F]+$'

export const ConsoleUserSchema = Type.Object(
  {
    id: Type.String({ description: '`usr_...`' }),
    email: Type.String(),
    role: StringEnum(CONSOLE_ROLES),
    mustChangePassword: Type.Boolean({
      description:
        'Set until the user replaces a one-time password; until then only the session routes answer.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    lastSignInAt: NullableString({ format: 'date-time' }),
  },
  { title: 'ConsoleUser', additionalProperties: false },
)

export type ConsoleUser = Static<typeof ConsoleUserSchema>

export const SignInInputSchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, pattern: NO_CONTROL_CHARACTERS }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
    tenantId: Type.Optional(
      Type.String({
        pattern: idPattern('tenant'),
        description:
          'The tenant to sign in to (`ten_...`). Needed only by someone whose email is a console user of ' +
          'several tenants with the same password: without it, the password picks the tenant (the oldest ' +
          'account if it fits several).',
      }),
    ),
  },
  { title: 'SignInInput', additionalProperties: false },
)

export type SignInInput = Static<typeof SignInInputSchema>

export const ConsoleSessionSchema = Type.Object(
  {
    user: ConsoleUserSchema,
    tenant: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        timeZone: Type.String({ description: 'IANA time zone; the dashboard counts hours in it.' }),
      },
      { additionalProperties: false },
    ),
    csrfToken: Type.String({
      description: 'Send it as `X-CSRF-Token` on every request that changes something (not GET or HEAD).',
    }),
  },
  { title: 'ConsoleSession', additionalProperties: false },
)

export type ConsoleSession = Static<typeof ConsoleSessionSchema>

export const PasswordChangeInputSchema = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
    newPassword: Type.String({
      minLength: MIN_PASSWORD_LENGTH,
      maxLength: MAX_PASSWORD_LENGTH,
      description: `At least ${MIN_PASSWORD_LENGTH} characters, counted after NFKC normalization, not all white space; not the current one.`,
    }),
  },
  { title: 'PasswordChangeInput', additionalProperties: false },
)

export type PasswordChangeInput = Static<typeof PasswordChangeInputSchema>

export const ConsoleUserInviteSchema = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN }),
    role: StringEnum(CONSOLE_ROLES, { description: 'Only an owner may invite an owner.' }),
  },
  { title: 'ConsoleUserInvite', additionalProperties: false },
)

export type ConsoleUserInvite = Static<typeof ConsoleUserInviteSchema>

export const InvitedConsoleUserSchema = Type.Object(
  {
    user: ConsoleUserSchema,
    temporaryPassword: Type.String({
      description: 'Shown once. Good for the first sign-in only: the user must then choose a password.',
    }),
  },
  { title: 'InvitedConsoleUser', additionalProperties: false },
)

export type InvitedConsoleUser = Static<typeof InvitedConsoleUserSchema>

export const ConsoleUserListQuerySchema = Type.Object(PageQueryFields, { additionalProperties: false })

export type ConsoleUserListQuery = Static<typeof ConsoleUserListQuerySchema>

export const ConsoleUserPageSchema = PageSchema(ConsoleUserSchema, 'ConsoleUserPage')

export const ConsoleUserParamsSchema = Type.Object(
  { userId: Type.String({ pattern: idPattern('consoleUser') }) },
  { additionalProperties: false },
)
