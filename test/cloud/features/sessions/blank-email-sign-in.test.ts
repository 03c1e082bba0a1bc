/**
 * Found by fuzzing what requests store (test/system/cloud/fuzz-stored-records.test.ts): a sign-in
 * whose email is only white space passed the schema (it has a length) and became "" once trimmed,
 * so it was counted in the sign-in throttle under the key `email:`, one counter shared by every
 * blank attempt from anywhere, which locked after five. Such an email can name no user: it is
 * refused as invalid before anything is counted or stored.
 */
import { expect, it } from 'vitest'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { signInRequest, someAddress } from './session-kit.js'

describeEachDatabase('console sign-in with a blank email', (cloud) => {
  it('is refused as invalid, never counted, never locked out', async () => {
    const address = someAddress()
    // Six times the same blank email: the fifth failure would have locked a counted one out.
    const emails = [...Array(6).fill(' '), '   ', '\u00a0', '\ufeff ', ' \u2028 ', ' '.repeat(254)]
    for (const email of emails) {
      const res = await signInRequest(cloud, email, 'any password at all', { remoteAddress: address })
      expect(res.statusCode, `${JSON.stringify(email)}: ${res.body}`).toBe(400)
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ pointer: '#/email', message: 'must not be blank' }],
      })
    }
    const counters = await cloud.database.db
      .selectFrom('console_sign_in_failures')
      .select('key')
      .where((eb) => eb.or([eb('key', '=', 'email:'), eb('key', '=', `ip:${address}`)]))
      .execute()
    expect(counters).toEqual([])
  })
})
