/**
 * deploy/cloud.env.example is where an operator learns the cloud's settings
 * (docs/operators/configuration.md). Every variable cloud/config.ts reads must be in it, so a new setting
 * cannot ship undocumented, and it must name nothing the cloud does not read (a typo there is a setting that
 * silently does nothing).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

function names(text: string): Set<string> {
  return new Set([...text.matchAll(/\bHAJRI_[A-Z0-9_]+/g)].map((m) => m[0]))
}

describe('deploy/cloud.env.example', () => {
  const example = readFileSync(join(REPO, 'deploy/cloud.env.example'), 'utf8')
  // Settings appear as `NAME=` lines, commented out (default shown) or not.
  const documented = new Set([...example.matchAll(/^#? ?(HAJRI_[A-Z0-9_]+)=/gm)].map((m) => m[1] as string))
  const read = names(
    ['cloud/config.ts', 'cloud/db/secret-key.ts'].map((f) => readFileSync(join(REPO, f), 'utf8')).join('\n'),
  )

  it('documents every variable the cloud reads', () => {
    expect(read.size).toBeGreaterThan(15)
    expect([...read].filter((name) => !documented.has(name))).toEqual([])
  })

  it('names only variables the cloud reads', () => {
    expect([...names(example)].filter((name) => !read.has(name))).toEqual([])
  })
})
