import { tenantItemCommand } from './tenant-item-command.js'

/**
 * For an operator when a console user cannot sign in, above all a tenant's only owner
 * (docs/decisions/0050-console-roles.md):
 * a new one-time password, every session of theirs ended, and their sign-in lockout lifted.
 */
const resetPassword = tenantItemCommand({
  name: 'user reset-password',
  operand: { name: 'EMAIL', what: 'email of the console user' },
  act: (services, tenantId, email, actor) => services.consoleUsers.resetPassword(tenantId, email, actor),
  human: (result) =>
    `console user ${result.user.id} (${result.user.email}, ${result.user.role}): password reset, sessions ended\n` +
    `one-time password: ${result.temporaryPassword}\n(shown once; the console asks for a new one at the next sign-in)`,
})

export const userCommands = [resetPassword]
