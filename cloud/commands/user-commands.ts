import { command } from './command-context.js'

/**
 * For an operator when a console user cannot sign in, above all a tenant's only owner
 * (docs/decisions/0050-console-roles.md):
 * a new one-time password, every session of theirs ended, and their sign-in lockout lifted.
 */
const resetPassword = command({
  name: 'user reset-password',
  usage: '--tenant ID EMAIL',
  options: ['tenant'],
  operand: { name: 'EMAIL', what: 'email of the console user' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const email = context.operand()
    const result = await context.withServices((services) =>
      services.consoleUsers.resetPassword(tenantId, email, context.actor),
    )
    context.print(
      result,
      `console user ${result.user.id} (${result.user.email}, ${result.user.role}): password reset, sessions ended\n` +
        `one-time password: ${result.temporaryPassword}\n(shown once; the console asks for a new one at the next sign-in)`,
    )
  },
})

export const userCommands = [resetPassword]
