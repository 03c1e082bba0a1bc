import type { OAuthAppSummary } from '../../shared/credentials.js'
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../features/bearer-auth/credential-settings.js'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../features/oauth/app-service.js'
import { command, durationText } from './command-context.js'

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

const list = command({
  name: 'oauth-app list',
  usage: '--tenant ID',
  options: ['tenant'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const apps = await context.withServices((services) => services.oauthApps.list(tenantId))
    context.print(apps, apps.length === 0 ? 'no OAuth apps' : apps.map(describeApp).join('\n'))
  },
})

const rotateSecret = command({
  name: 'oauth-app rotate-secret',
  usage: `--tenant ID APP_ID [--grace ${durationText(DEFAULT_ROTATION_GRACE_SECONDS, 'h')}]`,
  options: ['tenant', 'grace'],
  operand: { name: 'APP_ID', what: 'id of the OAuth app (app_...)' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand()
    const grace = context.duration('grace')
    const result = await context.withServices((services) =>
      services.oauthApps.rotateSecret(tenantId, id, context.actor, grace),
    )
    context.print(
      result,
      `new client secret: ${result.clientSecret}\nthe previous secret works until ${result.previousSecretsExpireAt}\n${SHOWN_ONCE}`,
    )
  },
})

const revoke = command({
  name: 'oauth-app revoke',
  usage: '--tenant ID APP_ID',
  options: ['tenant'],
  operand: { name: 'APP_ID', what: 'id of the OAuth app to revoke (app_...)' },
  run: async (context) => {
    const tenantId = context.required('tenant')
    const id = context.operand()
    const app = await context.withServices((services) =>
      services.oauthApps.revoke(tenantId, id, context.actor),
    )
    context.print(
      app,
      `OAuth app ${app.id} revoked: its secrets and every token issued to it are refused from now on`,
    )
  },
})

export const oauthAppCommands = [create, list, rotateSecret, revoke]
