/**
 * Console user emails and OAuth client ids were unique across all tenants: tenant B, inviting an
 * address or choosing a client id, heard 409 when tenant A already had it (an oracle), and could
 * take addresses and ids tenant A would want. Emails are now unique within a tenant (the password,
 * or `tenantId`, picks the tenant at sign-in), and a tenant's OAuth apps get generated client ids.
 */
import { expect, it } from 'vitest'
import { describeEachDatabase, TEST_ACTOR } from '../../support/cloud-harness.js'
import {
  activate,
  newTenant,
  problemOf,
  signedInOwner,
  signInRequest,
} from '../features/sessions/session-kit.js'

describeEachDatabase('security review: console accounts across tenants', (cloud) => {
  it('security review #6: a tenant inviting another tenant’s console email is told nothing, and both users sign in to their own tenant', async () => {
    const a = await activate(cloud, await newTenant(cloud))
    const b = await signedInOwner(cloud)

    const invited = await b.browser.call('POST', '/users', { body: { email: a.email, role: 'admin' } })
    expect(invited.statusCode, invited.body).toBe(201)
    const bUser = await activate(cloud, {
      tenantId: b.owner.tenantId,
      id: invited.json().user.id,
      email: a.email,
      password: invited.json().temporaryPassword,
    })

    // Each password opens its own tenant; neither opens the other's.
    const asA = await signInRequest(cloud, a.email, a.password)
    expect(asA.statusCode, asA.body).toBe(200)
    expect(asA.json().tenant.id).toBe(a.tenantId)
    const asB = await signInRequest(cloud, a.email, bUser.password)
    expect(asB.statusCode, asB.body).toBe(200)
    expect(asB.json().tenant.id).toBe(b.owner.tenantId)
    const crossed = await cloud.app.inject({
      method: 'POST',
      url: '/api/console/v1/session',
      payload: { email: a.email, password: bUser.password, tenantId: a.tenantId },
    })
    expect(problemOf(crossed)).toEqual({ status: 401, code: 'invalid_credentials' })

    // Inviting the same email twice into one tenant is still refused: that is B's own user.
    const again = await b.browser.call('POST', '/users', { body: { email: a.email, role: 'viewer' } })
    expect(problemOf(again)).toEqual({ status: 409, code: 'console_user_exists' })
    // A's log holds nothing of B's invitation, and A's owner is unchanged.
    const aUsers = await cloud.services.consoleUsers.list(a.tenantId, {})
    expect(aUsers.data.map((u) => u.email)).toEqual([a.email])
  })

  it('security review #6: a tenant cannot choose an OAuth client id, so another tenant’s id is answered like any other', async () => {
    const a = await cloud.services.oauthApps.create(
      (await newTenant(cloud)).tenantId,
      { name: 'a', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const b = await signedInOwner(cloud)
    const create = (clientId: string) =>
      b.browser.call('POST', '/oauth-apps', { body: { name: 'b', scopes: ['employees:read'], clientId } })
    const taken = await create(a.clientId)
    const free = await create(`never-used-${Date.now()}-client`)
    for (const res of [taken, free]) {
      expect(problemOf(res), res.body).toEqual({ status: 400, code: 'validation_failed' })
      expect(res.json().errors).toEqual([expect.objectContaining({ in: 'body', pointer: '#/clientId' })])
    }
    expect({ ...taken.json(), instance: undefined }).toEqual({ ...free.json(), instance: undefined })

    // Without one, B's app gets a generated, unguessable id.
    const generated = await b.browser.call('POST', '/oauth-apps', {
      body: { name: 'b', scopes: ['employees:read'] },
    })
    expect(generated.statusCode, generated.body).toBe(201)
    expect(generated.json().clientId).toMatch(/^hjc_[0-9A-Za-z]{24}$/)
  })
})
