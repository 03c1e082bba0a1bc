/**
 * `hajri-cloud user reset-password --tenant ID EMAIL`: an operator's way back in for a console user
 * who cannot sign in, above all a tenant's only owner who has forgotten the password. It prints a
 * new one-time password, ends the user's sessions and lifts the sign-in delays of the email.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runCli } from '../../../cloud/cli.js'
import { SIGN_IN_DELAYS } from '../../../cloud/features/sign-in-throttle/sign-in-delays.js'
import { captureCli } from '../../support/cli-capture.js'
import { describeEachDatabase, TEST_SECRET_KEY } from '../../support/cloud-harness.js'
import { problemOf, signedInOwner, signInRequest, someAddress } from '../features/sessions/session-kit.js'

function cli(env: NodeJS.ProcessEnv, cwd: string, argv: string[]) {
  return captureCli(runCli, argv, { env, cwd })
}

describeEachDatabase('hajri-cloud user reset-password', (cloud) => {
  let workDir: string
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'hajri-user-cli-'))
    env = { HAJRI_DATABASE_URL: cloud.databaseUrl, HAJRI_SECRET_KEY: TEST_SECRET_KEY }
  })
  afterAll(() => rm(workDir, { recursive: true, force: true }))

  it('gives an only owner who forgot the password a new one-time password, ends their sessions, and lifts the delays', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const address = someAddress()
    for (let i = 0; i <= SIGN_IN_DELAYS.accountFromAddress.free; i++)
      await signInRequest(cloud, owner.email, 'forgotten', { remoteAddress: address })
    expect(
      problemOf(await signInRequest(cloud, owner.email, owner.password, { remoteAddress: address })),
    ).toEqual({ status: 429, code: 'login_locked' })

    const result = await cli(env, workDir, [
      'user',
      'reset-password',
      '--tenant',
      owner.tenantId,
      owner.email.toUpperCase(),
    ])
    expect(result.code, result.stderr).toBe(0)
    const password = /one-time password: (\S+)/.exec(result.stdout)?.[1]
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/)
    expect(result.stdout).toContain(owner.id)

    expect(problemOf(await browser.call('GET', '/session'))).toEqual({ status: 401, code: 'session_expired' })
    expect(problemOf(await signInRequest(cloud, owner.email, owner.password))).toEqual({
      status: 401,
      code: 'invalid_credentials',
    })
    // From the very address that was held back: the delays are lifted.
    const res = await signInRequest(cloud, owner.email, password as string, { remoteAddress: address })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().user.mustChangePassword).toBe(true)

    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'console_user.password_reset' })
    expect(audit.data[0]).toMatchObject({
      actor: expect.stringMatching(/^cli:/),
      target: { type: 'console_user', id: owner.id },
      details: { email: owner.email },
    })
    expect(JSON.stringify(audit.data)).not.toContain(password)
  })

  it('answers --json with the user and the password', async () => {
    const { owner } = await signedInOwner(cloud)
    const result = await cli(env, workDir, [
      'user',
      'reset-password',
      '--tenant',
      owner.tenantId,
      owner.email,
      '--json',
    ])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({
      user: expect.objectContaining({
        id: owner.id,
        email: owner.email,
        role: 'owner',
        mustChangePassword: true,
      }),
      temporaryPassword: expect.stringMatching(/^[A-Za-z0-9]{20}$/),
    })
  })

  it('fails for an email that is not a user of that tenant, and without the email or the tenant', async () => {
    const { owner } = await signedInOwner(cloud)
    const { owner: stranger } = await signedInOwner(cloud)
    const notHere = await cli(env, workDir, [
      'user',
      'reset-password',
      '--tenant',
      owner.tenantId,
      stranger.email,
      '--json',
    ])
    expect(notHere.code).toBe(1)
    expect(JSON.parse(notHere.stdout).error.code).toBe('console_user_not_found')
    // The stranger's password is untouched.
    expect((await signInRequest(cloud, stranger.email, stranger.password)).statusCode).toBe(200)
    expect((await cli(env, workDir, ['user', 'reset-password', '--tenant', owner.tenantId])).code).toBe(2)
    expect((await cli(env, workDir, ['user', 'reset-password', owner.email])).code).toBe(2)
  })
})
