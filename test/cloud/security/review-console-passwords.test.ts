/**
 * The 12-character minimum for a chosen console password counted UTF-16 units of the password as
 * typed, though it is hashed after NFKC normalization: `"e\u0301"` six times passed, and is six
 * characters once normalized. Twelve spaces passed too. The length is now counted in code points
 * after normalization, and a password of white space alone is refused.
 */
import { expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/cloud-harness.js'
import { problemOf, signedInOwner, signInRequest } from '../features/sessions/session-kit.js'

describeEachDatabase('security review: chosen console passwords', (cloud) => {
  it('security review #7: the minimum length counts characters after NFKC normalization, and a blank password is refused', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const change = (newPassword: string) =>
      browser.call('POST', '/session/password', { body: { currentPassword: owner.password, newPassword } })
    const refused = {
      'six e + combining acute (6 after NFKC)': 'e\u0301'.repeat(6),
      'a, b and five e + combining acute (7 after NFKC)': `ab${'e\u0301'.repeat(5)}`,
      'twelve spaces': ' '.repeat(12),
      'twelve ideographic spaces': '\u3000'.repeat(12),
      'spaces and zero-width spaces': ' \u200b'.repeat(8),
      'tabs and no-break spaces': '\t\u00a0'.repeat(6),
    }
    for (const [what, password] of Object.entries(refused)) {
      const res = await change(password)
      expect(problemOf(res), `${what}: ${res.body}`).toEqual({ status: 400, code: 'validation_failed' })
      expect(res.json().errors, what).toEqual([expect.objectContaining({ pointer: '#/newPassword' })])
    }
    // The old password still works: nothing was changed.
    expect((await signInRequest(cloud, owner.email, owner.password)).statusCode).toBe(200)

    // Twelve characters after normalization are enough, whatever their script or spaces inside.
    const accepted = `${'é'.normalize('NFD').repeat(6)}çàüöñß`
    expect([...accepted.normalize('NFKC')]).toHaveLength(12)
    const res = await change(accepted)
    expect(res.statusCode, res.body).toBe(204)
    expect((await signInRequest(cloud, owner.email, accepted.normalize('NFC'))).statusCode).toBe(200)
  })
})
