import type { AdminTokenSummary } from '../features/console-auth/admin-token-service.js'
import type { Command } from './command-context.js'

const describe = (t: AdminTokenSummary) =>
  [t.id, t.status.padEnd(7), `expires ${t.expiresAt}`, t.name].join('  ')

const create: Command = async (context) => {
  const tenantId = context.required('tenant')
  const input = { name: context.options.name, expiresInSeconds: context.duration('expires-in') }
  const result = await context.withServices((services) =>
    services.adminTokens.create(tenantId, input, context.actor),
  )
  context.print(
    result,
    `admin token ${result.id}, expires ${result.expiresAt}\n${result.token}\n` +
      '(shown once: only its hash is kept. It administers webhooks under /api/console/v1: keep it out of browser code)',
  )
}

const list: Command = async (context) => {
  const tenantId = context.required('tenant')
  const tokens = await context.withServices((services) => services.adminTokens.list(tenantId))
  context.print(tokens, tokens.length === 0 ? 'no admin tokens' : tokens.map(describe).join('\n'))
}

const revoke: Command = async (context) => {
  const tenantId = context.required('tenant')
  const id = context.operand('id of the admin token to revoke (adm_...)')
  const token = await context.withServices((services) =>
    services.adminTokens.revoke(tenantId, id, context.actor),
  )
  context.print(token, `admin token ${token.id} revoked`)
}

export const adminTokenCommands: Record<string, Command> = {
  'admin-token create': create,
  'admin-token list': list,
  'admin-token revoke': revoke,
}
