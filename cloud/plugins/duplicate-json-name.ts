const QUOTE = 0x22
const BACKSLASH = 0x5c

function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
}

/**
 * The first member name that appears twice in one object of `text`, decoded (so `"a"` and
 * `"\u0061"` are the same name), or undefined. RFC 8259 §4: names within an object SHOULD be unique,
 * and where they are not, receivers disagree on what the object says (the last one wins in
 * JavaScript, the first in others). `text` must already have parsed as JSON: then every string
 * followed by `:` is a member name. One linear pass, a set of names per open object.
 */
export function duplicateJsonName(text: string): string | undefined {
  const objects: (Set<string> | undefined)[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x7b) objects.push(new Set())
    else if (c === 0x5b) objects.push(undefined)
    else if (c === 0x7d || c === 0x5d) objects.pop()
    else if (c === QUOTE) {
      const start = i
      let escaped = false
      for (i++; text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true
          i++
        }
      }
      let next = i + 1
      while (next < text.length && isJsonWhitespace(text.charCodeAt(next))) next++
      const names = objects.at(-1)
      if (names === undefined || text.charCodeAt(next) !== 0x3a) continue
      const name = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i)
      if (names.has(name)) return name
      names.add(name)
    }
  }
  return undefined
}
