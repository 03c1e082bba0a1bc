/**
 * Whole numbers typed into a form, by field: '' is left out (the server's default, or inherited);
 * anything else must be a whole number from 0 up, or `error` names the field.
 */
export function wholeNumbers<K extends string>(
  texts: Record<K, string>,
  labels: Record<K, string>,
): { values: Partial<Record<K, number>>; error?: string } {
  const values: Partial<Record<K, number>> = {}
  for (const name of Object.keys(labels) as K[]) {
    const text = texts[name].trim()
    if (text === '') continue
    const value = Number(text)
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
      return { values, error: `${labels[name]} must be a whole number, 0 or more.` }
    }
    values[name] = value
  }
  return { values }
}

/** '' → null: an optional text field left empty clears the value. */
export const orNull = (text: string): string | null => (text.trim() === '' ? null : text.trim())

/** "E001, E002 E003" → the codes, without repeats. */
export function employeeCodes(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).filter((c) => c !== ''))]
}
