import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { agentJsonSchema } from '../../../agent/config/json-schema.js'
import { runAgentCli } from '../../../agent/main.js'
import { captureCli } from '../../support/cli-capture.js'
import { EXAMPLE, REPO_ROOT } from '../config/config-fixture.js'

const PUBLISHED = join(REPO_ROOT, 'deploy/agent.schema.json')

function agent(...argv: string[]) {
  return captureCli(runAgentCli, argv, { env: {}, cwd: REPO_ROOT })
}

describe('hajri-agent schema', () => {
  it('prints the JSON Schema generated from AgentConfigSchema, as pretty JSON', async () => {
    const result = await agent('schema')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(`${JSON.stringify(agentJsonSchema(), null, 2)}\n`)
    const schema = JSON.parse(result.stdout) as Record<string, unknown>
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#')
    expect(schema.title).toBe('hajri-agent configuration')
    expect(Object.keys(schema.properties as object)).toEqual([
      'site',
      'cloud',
      'spool',
      'status',
      'log',
      'mqtt',
      'adms',
      'devices',
    ])
  })

  it('is published as deploy/agent.schema.json, which is kept up to date', async () => {
    const printed = JSON.parse((await agent('schema')).stdout) as unknown
    const published = JSON.parse(await readFile(PUBLISHED, 'utf8')) as unknown
    // Compared as JSON: Biome formats the committed file (short arrays on one line).
    expect(
      published,
      'deploy/agent.schema.json is stale: regenerate it with\n' +
        '  npx tsx agent/main.ts schema > deploy/agent.schema.json && npx biome format --write deploy/agent.schema.json',
    ).toEqual(printed)
  })

  it('is a schema editors can use: it compiles, and accepts the example file', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false })
    ajv.addFormat('date-time', true)
    const validate = ajv.compile(JSON.parse(await readFile(PUBLISHED, 'utf8')) as object)
    // Editors see the file before substitution: ${...} are strings where strings are expected.
    const example = parse(await readFile(EXAMPLE, 'utf8')) as unknown
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ site: { id: 'x' } })).toBe(false)
  })

  it('takes no operand', async () => {
    const result = await agent('schema', 'extra')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('schema takes no operand')
  })
})
