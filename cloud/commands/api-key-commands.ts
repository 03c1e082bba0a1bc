import type { ApiKeySummary } from '../../shared/credentials.js'
import { DEFAULT_API_KEY_TTL_SECONDS } from '../features/api-keys/service.js'
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../features/bearer-auth/credential-settings.js'
import { command, durationText } from './command-context.js'
import { tenantItemCommand } from './tenant-item-command.js'
import { tenantListCommand } from './tenant-list-command.js'

function describeKey(key: ApiKeySummary): string {
  return [
    key.id,
    key.prefix.padEnd(10),
    key.status.padEnd(7),
    `${key.rateLimitPerMinute}/min`.padEnd(10),
    `expires ${key.expiresAt}`,
    `last used ${key.lastUsedAt ?? 'never'}`,
    `${key.name} (${key.scopes.join(' ')})`,
  ].join('  ')
}

const create = command({
  name: 'api-key create',
  usage: `--tenant ID --scopes employees:read,attendance:write\n[--rate-limit ${DEFAULT_RATE_LIMIT_PER_MINUTE}] [--expires-in ${durationText(DEFAULT_API_KEY_TTL_SECONDS, 'd')}] [--name NAME]`,
  options: ['tenant', 'scopes', 'rate-limit', 'expires-in', 'name'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const input = {
      name: context.options.name,
      scopes: context.list('scopes'),
      rateLimitPerMinute: context.wholeNumber('rate-limit'),
      expiresInSeconds: context.duration('expires-in'),
    }
    const result = await context.withServices((services) =>
      services.apiKeys.create(tenantId, input, context.actor),
    )
    context.print(
      result,
      `API key ${result.id} (${result.scopes.join(' ')}), ${result.rateLimitPerMinute}/min, expires ${result.expiresAt}\n` +
        `${result.key}\n(shown once: store it now, only its hash is kept; never put it in browser code)`,
    )
  },
})

const list = tenantListCommand({
  name: 'api-key list',
  list: (services, tenantId) => services.apiKeys.list(tenantId),
  none: 'no API keys',
  describe: describeKey,
})

const revoke = tenantItemCommand({
  name: 'api-key revoke',
  operand: { name: 'KEY_ID', what: 'id of the API key to revoke (key_...)' },
  act: (services, tenantId, id, actor) => services.apiKeys.revoke(tenantId, id, actor),
  human: (key) => `API key ${key.id} revoked: it is refused from the next request on`,
})

export const apiKeyCommands = [create, list, revoke]
