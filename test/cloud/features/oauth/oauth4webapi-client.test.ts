/**
 * A real OAuth client library (oauth4webapi) performs the client credentials
 * grant with both client authentication methods against the running server, over HTTP on a real
 * socket, for a client id that needs URL-encoding; then uses, introspects and revokes the token.
 */
import type { AddressInfo } from 'node:net'
import * as oauth from 'oauth4webapi'
import { beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase, employee, type TestCloud } from '../../../support/cloud-harness.js'
import {
  AWKWARD_CLIENT_ID,
  createClient,
  EMPLOYEES,
  METADATA,
  PUNCHES,
  type TestClient,
} from './conformance-support.js'

// The server listens on plain HTTP on loopback; oauth4webapi refuses http:// unless told.
const INSECURE = { [oauth.allowInsecureRequests]: true } as const
const SCOPE = 'employees:read attendance:write'

const METHODS = {
  client_secret_basic: oauth.ClientSecretBasic,
  client_secret_post: oauth.ClientSecretPost,
} as const

/** The error a rejected promise holds, for assertions on it. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected the library to throw'),
    (err: unknown) => err,
  )
}

describeEachDatabase(
  'a real OAuth client library (oauth4webapi) against the running server',
  (cloud: TestCloud) => {
    let base: string
    let as: oauth.AuthorizationServer
    const clients = {} as Record<'generated' | 'awkward', TestClient>

    beforeAll(async () => {
      const tenantId = await cloud.createTenant()
      await cloud.upsertEmployees(tenantId, [employee('E001')])
      clients.generated = await createClient(cloud, tenantId, ['employees:read', 'attendance:write'])
      clients.awkward = await createClient(
        cloud,
        tenantId,
        ['employees:read', 'attendance:write'],
        AWKWARD_CLIENT_ID,
      )
      await cloud.app.listen({ host: '127.0.0.1', port: 0 })
      base = `http://127.0.0.1:${(cloud.app.server.address() as AddressInfo).port}`
      // RFC 8414 §3: discovery from the well-known path; the library checks issuer === base URL (§3.3).
      const issuer = new URL(base)
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...INSECURE })
      as = await oauth.processDiscoveryResponse(issuer, response)
    })

    it('discovers the server from /.well-known/oauth-authorization-server, issuer equal to the base URL', () => {
      expect(new URL(METADATA, base).pathname).toBe('/.well-known/oauth-authorization-server')
      expect(as.issuer).toBe(base)
      expect(as.token_endpoint).toBe(`${base}/api/oauth/token`)
      expect(as.revocation_endpoint).toBe(`${base}/api/oauth/revoke`)
      expect(as.introspection_endpoint).toBe(`${base}/api/oauth/introspect`)
      expect(as.token_endpoint_auth_methods_supported).toEqual(Object.keys(METHODS))
      expect(as.grant_types_supported).toEqual(['client_credentials'])
    })

    for (const which of ['generated', 'awkward'] as const) {
      for (const [method, auth] of Object.entries(METHODS)) {
        describe(`${which} client id, ${method}`, () => {
          it('gets a token, uses it to read and to write, introspects it, revokes it', async () => {
            const { clientId, clientSecret } = clients[which]
            if (which === 'awkward') expect(encodeURIComponent(clientId)).not.toBe(clientId)
            const client: oauth.Client = { client_id: clientId }
            const grant = await oauth.clientCredentialsGrantRequest(
              as,
              client,
              auth(clientSecret),
              { scope: SCOPE },
              INSECURE,
            )
            const token = await oauth.processClientCredentialsResponse(as, client, grant)
            expect(token.token_type).toBe('bearer')
            expect(token.expires_in).toBe(3600)
            expect(token.scope).toBe(SCOPE)
            const accessToken = token.access_token

            const read = await oauth.protectedResourceRequest(
              accessToken,
              'GET',
              new URL(EMPLOYEES, base),
              undefined,
              undefined,
              INSECURE,
            )
            expect(read.status).toBe(200)
            expect(((await read.json()) as { data: { employeeCode: string }[] }).data[0]?.employeeCode).toBe(
              'E001',
            )

            const write = await oauth.protectedResourceRequest(
              accessToken,
              'POST',
              new URL(PUNCHES, base),
              new Headers({ 'content-type': 'application/json' }),
              JSON.stringify({ employeeCode: 'E001', punchType: 'IN', externalId: `lib-${which}-${method}` }),
              INSECURE,
            )
            expect(write.status, await write.clone().text()).toBe(201)

            const introspection = await oauth.processIntrospectionResponse(
              as,
              client,
              await oauth.introspectionRequest(as, client, auth(clientSecret), accessToken, INSECURE),
            )
            expect(introspection).toMatchObject({ active: true, client_id: clientId, scope: SCOPE })
            expect(introspection.exp).toBe((introspection.iat as number) + 3600)

            const revoked = await oauth.processRevocationResponse(
              await oauth.revocationRequest(as, client, auth(clientSecret), accessToken, INSECURE),
            )
            expect(revoked).toBeUndefined()

            // RFC 6750 §3.1: the library reads the refusal from the Bearer challenge.
            const after = await rejection(
              oauth.protectedResourceRequest(
                accessToken,
                'GET',
                new URL(EMPLOYEES, base),
                undefined,
                undefined,
                INSECURE,
              ),
            )
            expect(after).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
            expect(after).toMatchObject({ status: 401 })
            expect((after as oauth.WWWAuthenticateChallengeError).cause[0]).toMatchObject({
              scheme: 'bearer',
              parameters: { error: 'invalid_token' },
            })
            const inactive = await oauth.processIntrospectionResponse(
              as,
              client,
              await oauth.introspectionRequest(as, client, auth(clientSecret), accessToken, INSECURE),
            )
            expect(inactive).toEqual({ active: false })
          })

          it('is told invalid_scope by an error the library parses (RFC 6749 §5.2)', async () => {
            const { clientId, clientSecret } = clients[which]
            const client: oauth.Client = { client_id: clientId }
            const response = await oauth.clientCredentialsGrantRequest(
              as,
              client,
              auth(clientSecret),
              { scope: 'attendance:read' },
              INSECURE,
            )
            const err = await rejection(oauth.processClientCredentialsResponse(as, client, response))
            expect(err).toBeInstanceOf(oauth.ResponseBodyError)
            expect(err).toMatchObject({ error: 'invalid_scope', status: 400 })
          })

          it('is refused a wrong secret with invalid_client, 401', async () => {
            const { clientId, clientSecret } = clients[which]
            const client: oauth.Client = { client_id: clientId }
            const response = await oauth.clientCredentialsGrantRequest(
              as,
              client,
              auth(`${clientSecret}x`),
              {},
              INSECURE,
            )
            expect(response.status).toBe(401)
            const err = await rejection(oauth.processClientCredentialsResponse(as, client, response))
            // With a challenge the library reports the challenge; without, the body's error.
            if (err instanceof oauth.WWWAuthenticateChallengeError) {
              expect(err.cause[0]?.scheme).toBe('basic')
              expect(await err.response.json()).toMatchObject({ error: 'invalid_client' })
            } else {
              expect(err).toBeInstanceOf(oauth.ResponseBodyError)
              expect(err).toMatchObject({ error: 'invalid_client', status: 401 })
            }
          })
        })
      }
    }
  },
)
