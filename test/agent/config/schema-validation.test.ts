import { describe, expect, it } from 'vitest'
import { AgentConfigSchema } from '../../../agent/config/schema.js'
import { PATTERN_HINTS } from '../../../agent/config/schema-validation.js'

/** Every `pattern` in the schema, and every key pattern of a patternProperties. */
function patternsIn(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsIn(item, out)
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') out.add(value)
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        for (const pattern of Object.keys(value)) out.add(pattern)
      }
      patternsIn(value, out)
    }
  }
  return out
}

describe('schema validation messages', () => {
  it('explain every pattern of the schema in words', () => {
    const patterns = [...patternsIn(AgentConfigSchema)]
    expect(patterns.length).toBeGreaterThan(3)
    const missing = patterns.filter((p) => PATTERN_HINTS[p] === undefined)
    expect(missing, 'add a message to PATTERN_HINTS in agent/config/schema-validation.ts').toEqual([])
  })
})
