/**
 * Fills a document with the `default`s of its JSON Schema: the one place defaults are written
 * (docs/decisions/0023-agent-yaml-configuration.md). JSON Schema's meaning, strictly: a default applies to a
 * setting that is absent, and is never merged into one that is present (TypeBox's Value.Default merges object
 * defaults, so `framing: {type: stx-etx}` would gain the line framing's delimiter). ajv's `useDefaults` has
 * the same meaning but skips the branches of a union (its documented limit), so `framing:
 * {type: line}` would miss its delimiter: here a union's branch is chosen by its tag (`type`), and
 * filled like any other schema.
 */

type SchemaNode = Record<string, unknown>
type Mapping = Record<string, unknown>

const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Fills `value` in place where it is a mapping or list; returns it, or the default if it was absent. */
export function fillDefaults(schema: SchemaNode, value: unknown): unknown {
  let filled = value
  if (filled === undefined && 'default' in schema) filled = structuredClone(schema.default)
  if (filled === undefined) return undefined
  const anyOf = schema.anyOf
  if (Array.isArray(anyOf)) {
    const branch = branchFor(anyOf as SchemaNode[], filled)
    return branch ? fillDefaults(branch, filled) : filled
  }
  const properties = schema.properties
  if (isMapping(properties) && isMapping(filled)) {
    for (const [key, property] of Object.entries(properties)) {
      if (!isMapping(property)) continue
      const inner = fillDefaults(property, Object.hasOwn(filled, key) ? filled[key] : undefined)
      if (inner !== undefined) filled[key] = inner
    }
  }
  const items = schema.items
  if (isMapping(items) && Array.isArray(filled)) {
    for (const [i, item] of filled.entries()) filled[i] = fillDefaults(items, item)
  }
  return filled
}

/** The branch of a union of mappings whose tag (a property with a `const`) the value carries. */
function branchFor(branches: readonly SchemaNode[], value: unknown): SchemaNode | undefined {
  if (!isMapping(value)) return undefined
  return branches.find((branch) => {
    const properties = branch.properties
    if (!isMapping(properties)) return false
    return Object.entries(properties).some(
      ([key, property]) => isMapping(property) && 'const' in property && value[key] === property.const,
    )
  })
}
