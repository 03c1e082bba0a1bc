import type { OAuthAppSummary } from '../../shared/credentials.js'
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../features/bearer-auth/credential-settings.js'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../features/secret-rotation.js'
import { command } from './command-context.js'
import { rotateSecretCommand } from './rotate-secret-command.js'
import { tenantItemCommand } from './tenant-item-command.js'
import { tenantListCommand } from './tenant-list-command.js'

function describeApp(app: OAuthAppSummary): string {
  const secrets = app.secrets
    .map((s) => `${s.prefix}… ${s.expiresAt === null ? 'current' : `until ${s.expiresAt}`}`)
    .join(', ')
  return [
    app.id,
    app.status.padEnd(7),
    `${app.rateLimitPerMinute}/min`.padEnd(10),
    `client id ${app.clientId}`,
    `${app.name} (${app.scopes.join(' ')})`,
    secrets === '' ? 'no live secret' : `secrets: ${secrets}`,
  ].join('  ')
}

const SHOWN_ONCE =
  '(the secret is shown once: store it now, only its hash is kept; never put it in browser code)'

const create = command({
  name: 'oauth-app create',
  usage: `--tenant ID --name NAME --scopes attendance:write [--rate-limit ${DEFAULT_RATE_LIMIT_PER_MINUTE}] [--client-id ID]`,
  options: ['tenant', 'name', 'scopes', 'rate-limit', 'client-id'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const input = {
      name: context.required('name'),
      scopes: context.list('scopes'),
      rateLimitPerMinute: context.wholeNumber('rate-limit'),
      clientId: context.options['client-id'],
    }
    const result = await context.withServices((services) =>
      services.oauthApps.create(tenantId, input, context.actor),
    )
    context.print(
      result,
      `OAuth app ${result.id}\nclient id:     ${result.clientId}\nclient secret: ${result.clientSecret}\n${SHOWN_ONCE}`,
    )
  },
})

const list = tenantListCommand({
  name: 'oauth-app list',
  list: (services, tenantId) => services.oauthApps.list(tenantId),
  none: 'no OAuth apps',
  describe: describeApp,
})

const rotateSecret = rotateSecretCommand({
  name: 'oauth-app rotate-secret',
  operand: { name: 'APP_ID', what: 'id of the OAuth app (app_...)' },
  defaultGraceSeconds: DEFAULT_ROTATION_GRACE_SECONDS,
  rotate: (services, tenantId, id, actor, graceSeconds) =>
    services.oauthApps.rotateSecret(tenantId, id, actor, graceSeconds),
  human: (result) =>
    `new client secret: ${result.clientSecret}\nthe previous secret works until ${result.previousSecretsExpireAt}\n${SHOWN_ONCE}`,
})

const revoke = tenantItemCommand({
  name: 'oauth-app revoke',
  operand: { name: 'APP_ID', what: 'id of the OAuth app to revoke (app_...)' },
  act: (services, tenantId, id, actor) => services.oauthApps.revoke(tenantId, id, actor),
  human: (app) =>
    `OAuth app ${app.id} revoked: its secrets and every token issued to it are refused from now on`,
})

export const oauthAppCommands = [create, list, rotateSecret, revoke]
