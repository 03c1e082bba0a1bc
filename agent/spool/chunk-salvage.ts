/**
 * What can still be read out of a chunk file that no longer parses, a corrupted spool chunk
 * (docs/development/architecture.md#the-agents-guarantees). A chunk is `{"kind":…,"items":[{…},{…}]}`: each
 * item is a JSON object of its own, so a broken frame, garbage appended, a torn end or a damaged record in
 * the middle leaves the records around it whole. They are found by trying every `{` as the start of an
 * object: the balanced text from there is parsed and kept if `isItem` accepts it, and the search resumes
 * after it; anything else moves on to the next `{`. Each attempt starts outside any string, so a stray quote
 * in the damage spoils only the attempts that begin before it.
 */

interface SalvageOptions<T> {
  /** Whether a parsed object is an item worth keeping (its shape, and whatever else can be checked). */
  isItem: (value: unknown) => value is T
  /** The longest text taken for one item: an object longer than this is never an item. */
  maxItemChars?: number
}

interface Salvage<T> {
  /** Items found whole, in file order. */
  items: T[]
  /** Whether the search stopped early (see WORK_PER_CHAR): items after that point were not looked for. */
  cutShort: boolean
}

/** Far above a punch (about 200 characters) or a dead letter with its 1 KiB frame and problem. */
const DEFAULT_MAX_ITEM_CHARS = 64 * 1024
/**
 * Characters looked at, per character of the file, before giving up: damage made of nothing but
 * `{` would otherwise cost the file's length times maxItemChars. An ordinary damaged chunk costs
 * about 2 (each record once, and the outer object once up to maxItemChars).
 */
const WORK_PER_CHAR = 64
const OPEN = 0x7b // {
const CLOSE = 0x7d // }
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \

export function salvageItems<T>(text: string, options: SalvageOptions<T>): Salvage<T> {
  const maxItemChars = options.maxItemChars ?? DEFAULT_MAX_ITEM_CHARS
  let budget = WORK_PER_CHAR * text.length + maxItemChars
  const items: T[] = []
  let from = text.indexOf('{')
  while (from >= 0) {
    if (budget <= 0) return { items, cutShort: true }
    const end = balancedEnd(text, from, maxItemChars)
    budget -= end === undefined ? Math.min(maxItemChars, text.length - from) : end - from
    if (end !== undefined) {
      const value = parse(text.slice(from, end))
      if (value !== undefined && options.isItem(value)) {
        items.push(value)
        from = text.indexOf('{', end)
        continue
      }
    }
    from = text.indexOf('{', from + 1)
  }
  return { items, cutShort: false }
}

/** One past the `}` that closes the object opened at `start`, or undefined within `maxChars`. */
function balancedEnd(text: string, start: number, maxChars: number): number | undefined {
  const limit = Math.min(text.length, start + maxChars)
  let depth = 0
  let inString = false
  for (let i = start; i < limit; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN) depth++
    else if (c === CLOSE && --depth === 0) return i + 1
  }
  return undefined
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
