import { type TUnsafe, Type } from '@sinclair/typebox'

/**
 * A string enum as plain JSON Schema (`{type: string, enum}`), which reads better in OpenAPI and in
 * validation messages than TypeBox's union of literals.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/** Text a person types: no control characters (they break CSV exports, and PostgreSQL refuses NUL). */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F]*$'

interface NullableStringOptions {
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  description?: string
  examples?: unknown[]
}

/**
 * A string that may also be `null`: integrators' serializers often emit `null` for an absent
 * optional field, and a response shows an unset field as `null` rather than leaving it out.
 */
export function NullableString(options: NullableStringOptions = {}): TUnsafe<string | null> {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options })
}
