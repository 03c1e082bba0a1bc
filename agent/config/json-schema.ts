import { AgentConfigSchema } from './schema.js'

/**
 * The configuration's JSON Schema as published in deploy/agent.schema.json
 * (docs/decisions/0023-agent-yaml-configuration.md), for editors: a YAML file that starts with
 * `# yaml-language-server: $schema=./agent.schema.json` gets completion, descriptions, defaults and
 * errors as it is typed. Draft-07 is what TypeBox's output conforms to and what editors support best.
 *
 * AgentConfigSchema describes the file once its defaults are filled, so a setting with a default
 * is `required` there. Editors see the file as written, where such a setting may be left out: the
 * published schema requires only the settings that have no default.
 */
export function agentJsonSchema(): Record<string, unknown> {
  // Through JSON: TypeBox's symbol-keyed metadata is not part of the schema, and this is a copy.
  const schema = JSON.parse(
    JSON.stringify({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $comment: 'Generated from agent/config/schema.ts by `hajri-agent schema`: edit that, not this.',
      ...AgentConfigSchema,
    }),
  ) as Record<string, unknown>
  relaxDefaulted(schema)
  return schema
}

function relaxDefaulted(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) relaxDefaulted(item)
    return
  }
  if (typeof node !== 'object' || node === null) return
  const schema = node as Record<string, unknown>
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined
  if (properties && Array.isArray(schema.required)) {
    const required = (schema.required as string[]).filter((name) => properties[name]?.default === undefined)
    if (required.length > 0) schema.required = required
    else delete schema.required
  }
  for (const value of Object.values(schema)) relaxDefaulted(value)
}
