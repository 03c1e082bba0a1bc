import { type AdminTokenSummary, DEFAULT_ADMIN_TOKEN_TTL_SECONDS } from '../features/admin-tokens/service.js'
import { command, durationText } from './command-context.js'
import { tenantItemCommand } from './tenant-item-command.js'
import { tenantListCommand } from './tenant-list-command.js'

const describe = (t: AdminTokenSummary) =>
  [t.id, t.status.padEnd(7), `expires ${t.expiresAt}`, t.name].join('  ')

const create = command({
  name: 'admin-token create',
  usage: `--tenant ID [--name NAME] [--expires-in ${durationText(DEFAULT_ADMIN_TOKEN_TTL_SECONDS, 'd')}]`,
  options: ['tenant', 'name', 'expires-in'],
  run: async (context) => {
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
  },
})

const list = tenantListCommand({
  name: 'admin-token list',
  list: (services, tenantId) => services.adminTokens.list(tenantId),
  none: 'no admin tokens',
  describe,
})

const revoke = tenantItemCommand({
  name: 'admin-token revoke',
  operand: { name: 'TOKEN_ID', what: 'id of the admin token to revoke (adm_...)' },
  act: (services, tenantId, id, actor) => services.adminTokens.revoke(tenantId, id, actor),
  human: (token) => `admin token ${token.id} revoked`,
})

export const adminTokenCommands = [create, list, revoke]
