/**
 * Five wrong passwords locked any console email for 15 minutes, whoever typed them and from
 * wherever, including a tenant's only owner, and only an operator could lift it: anyone who knew
 * the owner's email could keep them out. Failures now earn growing delays: for the email from the
 * address that failed, and for the email from all the addresses that have failed for it, never for
 * an address that has not.
 */
import { afterEach, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/cloud-harness.js'
import {
  activate,
  newTenant,
  problemOf,
  signInRequest,
  someAddress,
} from '../features/sessions/session-kit.js'

const SECOND = 1_000_000

describeEachDatabase('security review: console sign-in delays', (cloud) => {
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  it('security review #8: guesses from other addresses never keep the owner out', async () => {
    const owner = await activate(cloud, await newTenant(cloud))
    cloud.fixedNow = cloud.now()
    const attackers = [someAddress(), someAddress(), someAddress(), someAddress()]
    const refused: number[] = []
    // Forty wrong passwords from four addresses, all at one instant: far past any lockout.
    for (const address of attackers)
      for (let i = 0; i < 10; i++) {
        const res = await signInRequest(cloud, owner.email, `guess ${i}`, { remoteAddress: address })
        if (res.statusCode === 429) refused.push(Number(res.headers['retry-after']))
        else expect(problemOf(res)).toEqual({ status: 401, code: 'invalid_credentials' })
      }
    // The guessers were slowed down: each was held back after its own few free failures.
    expect(refused.length).toBeGreaterThan(20)
    expect(refused.every((s) => s >= 1 && s <= 900)).toBe(true)

    // The owner, from an address of their own, signs in at once with the right password.
    const res = await signInRequest(cloud, owner.email, owner.password, { remoteAddress: someAddress() })
    expect(res.statusCode, res.body).toBe(200)
    // And a typo of theirs costs them nothing either.
    const home = someAddress()
    expect((await signInRequest(cloud, owner.email, 'typo', { remoteAddress: home })).statusCode).toBe(401)
    expect(
      (await signInRequest(cloud, owner.email, owner.password, { remoteAddress: home })).statusCode,
    ).toBe(200)
  })

  it('security review #8: from one address, each failure beyond the first few doubles the wait, which ends by itself', async () => {
    const owner = await activate(cloud, await newTenant(cloud))
    const address = someAddress()
    let now = cloud.now()
    cloud.fixedNow = now
    const attempt = (password: string) =>
      signInRequest(cloud, owner.email, password, { remoteAddress: address })
    for (let i = 0; i < 4; i++) expect((await attempt(`wrong ${i}`)).statusCode, `failure ${i + 1}`).toBe(401)
    for (const wait of [1, 2, 4, 8]) {
      const held = await attempt(owner.password)
      expect(problemOf(held)).toEqual({ status: 429, code: 'login_locked' })
      expect(held.headers['retry-after']).toBe(String(wait))
      now += wait * SECOND
      cloud.fixedNow = now
      expect((await attempt('wrong again')).statusCode).toBe(401)
    }
    // No operator needed: once the wait is over, the right password opens the session.
    now += 16 * SECOND
    cloud.fixedNow = now
    expect((await attempt(owner.password)).statusCode).toBe(200)
  })
})
