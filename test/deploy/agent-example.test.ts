import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAgentConfig } from '../../agent/config/load.js'
import { AgentConfigSchema } from '../../agent/config/schema.js'
import { ConfigDir, EXAMPLE, EXAMPLE_ENV, exampleInto } from '../agent/config/config-fixture.js'

/** Every setting name in the schema, at any depth. */
function settingNames(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) settingNames(item, out)
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && typeof value === 'object' && value !== null) {
        for (const name of Object.keys(value)) out.add(name)
      }
      settingNames(value, out)
    }
  }
  return out
}

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

describe('deploy/agent.example.yaml', () => {
  it('is a valid configuration', async () => {
    const config = await loadAgentConfig(await exampleInto(files), EXAMPLE_ENV)
    expect(config.site.id).toBe('pune-plant-1')
    expect(config.cloud.clientSecret).toBe('example-client-secret')
    expect(config.mqtt?.embedded?.users).toEqual([
      { username: 'gate-1', password: 'gate-1-pw' },
      { username: 'canteen', password: 'canteen-pw' },
    ])
    expect(config.spool.maxBytes).toBe(2 * 1024 ** 3)
    expect(config.devices.map((d) => d.id)).toEqual([
      'gate-1',
      'canteen',
      'main-door',
      'entry-turnstile',
      'canteen-face',
    ])
    expect(config.adms).toMatchObject({ listen: '0.0.0.0:8081', maxBodyBytes: 2 * 1024 ** 2 })
    expect(config.devices.at(-1)).toMatchObject({
      adms: { serialNumber: 'CJDE193560303' },
      pin: { prefix: 'E', width: 4 },
    })
  })

  it('starts with the editor schema line, next to the published schema', async () => {
    const text = await readFile(EXAMPLE, 'utf8')
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./agent.schema.json')
  })

  it('names every setting of the schema (commented out where it is an alternative or a default)', async () => {
    const text = await readFile(EXAMPLE, 'utf8')
    const names = [...settingNames(AgentConfigSchema)]
    expect(names.length).toBeGreaterThan(40)
    const missing = names.filter((name) => !new RegExp(`(^|[\\s{#-])${name}:`, 'm').test(text))
    expect(missing, 'explain these settings in deploy/agent.example.yaml').toEqual([])
  })
})
