/**
 * cloud.url and clear text: over http:// the OAuth client secret (RFC 6749 §2.3.1, sent with every
 * token request), the access token and every punch cross the network readable by anyone on the
 * path. check-config (and the agent, which loads the same way) refuses an http:// URL to another
 * machine unless cloud.allowInsecure says so. Real files and the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgent } from '../commands/run-agent.js'
import { ConfigDir, minimalDoc } from '../config/config-fixture.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

async function checkConfig(cloud: Record<string, unknown>) {
  const doc = minimalDoc()
  Object.assign(doc.cloud, cloud)
  const file = await files.writeConfig(doc)
  return runAgent(files.dir, {}, 'check-config', '--config', file)
}

describe('check-config and an http:// cloud URL', () => {
  it('security review (info): refuses http:// to another machine, naming cloud.url (exit status 2)', async () => {
    for (const url of ['http://hajri.example.com', 'http://192.168.1.10:8080', 'http://[2001:db8::1]/']) {
      const result = await checkConfig({ url })
      expect(result.code, url).toBe(2)
      expect(result.stdout + result.stderr, url).toMatch(/cloud\.url.*http:\/\/ to another machine/)
    }
  })

  it('security review (info): accepts http:// to this machine, and to another only with cloud.allowInsecure (with a warning)', async () => {
    for (const url of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
      const result = await checkConfig({ url })
      expect(result.code, url).toBe(0)
      expect(result.stderr, url).toBe('')
    }
    const insecure = await checkConfig({ url: 'http://hajri.example.com', allowInsecure: true })
    expect(insecure.code).toBe(0)
    expect(insecure.stderr).toMatch(/^warning: cloud\.url: uses http:\/\/ to another machine/m)
    expect((await checkConfig({ url: 'https://hajri.example.com' })).stderr).toBe('')
  })
})
