/**
 * The app's OpenAPI document as the security suite reads it: each route's operation,
 * request body, query parameters and responses, and a walk over every schema in them.
 */
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'

export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  additionalProperties?: boolean | JsonSchema
  patternProperties?: Record<string, JsonSchema>
  items?: JsonSchema | JsonSchema[]
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  allOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  maxLength?: number
  minLength?: number
  maxItems?: number
  minItems?: number
  format?: string
  pattern?: string
  required?: string[]
  $ref?: string
  [other: string]: unknown
}

export interface Parameter {
  in: 'query' | 'path' | 'header' | 'cookie'
  name: string
  required?: boolean
  schema?: JsonSchema
}

export interface Operation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>
  security?: unknown[]
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, JsonSchema> }
}

export async function openApiOf(app: FastifyInstance): Promise<OpenApiDocument> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  expect(res.statusCode).toBe(200)
  return res.json() as OpenApiDocument
}

/** `/employees/:employeeCode` as OpenAPI writes it. */
export const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

/** The documented operation of a route (HEAD: its GET's). */
export function operationOf(
  spec: OpenApiDocument,
  route: { method: string; url: string },
): Operation | undefined {
  const method = route.method === 'HEAD' ? 'get' : route.method.toLowerCase()
  return spec.paths[openApiPath(route.url)]?.[method]
}

export function resolve(spec: OpenApiDocument, schema: JsonSchema): JsonSchema {
  if (schema.$ref === undefined) return schema
  const name = schema.$ref.replace(/^#\/components\/schemas\//, '')
  const found = spec.components?.schemas?.[name]
  if (!found) throw new Error(`unresolved ${schema.$ref}`)
  return resolve(spec, found)
}

export const queryParameters = (op: Operation | undefined) =>
  (op?.parameters ?? []).filter((p) => p.in === 'query')

/** A node of a schema walk: the schema, and where it is (a JSON pointer into the instance). */
export interface SchemaNode {
  schema: JsonSchema
  pointer: string
}

/** Every subschema, depth first, with the instance pointer it applies at (`*` for array items). */
export function walkSchema(spec: OpenApiDocument, root: JsonSchema, pointer = ''): SchemaNode[] {
  const schema = resolve(spec, root)
  const out: SchemaNode[] = [{ schema, pointer }]
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    out.push(...walkSchema(spec, child, `${pointer}/${name}`))
  }
  if (typeof schema.additionalProperties === 'object') {
    out.push(...walkSchema(spec, schema.additionalProperties, `${pointer}/*`))
  }
  for (const child of Object.values(schema.patternProperties ?? {})) {
    out.push(...walkSchema(spec, child, `${pointer}/*`))
  }
  const items = Array.isArray(schema.items) ? schema.items : schema.items ? [schema.items] : []
  for (const child of items) out.push(...walkSchema(spec, child, `${pointer}/*`))
  for (const child of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    out.push(...walkSchema(spec, child, pointer))
  }
  return out
}

const typesOf = (schema: JsonSchema): string[] =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type]

export const isObjectSchema = (schema: JsonSchema) =>
  typesOf(schema).includes('object') || schema.properties !== undefined

export const isStringSchema = (schema: JsonSchema) => typesOf(schema).includes('string')
