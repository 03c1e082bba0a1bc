import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkDocLinks, formatBroken, markdownFiles, REPOSITORY_ROOT } from './doc-links.js'

describe('links in the Markdown files', () => {
  it('every relative link and heading anchor in the repository resolves', async () => {
    const broken = await checkDocLinks(REPOSITORY_ROOT)
    // Listing each one makes the failure say what to fix.
    expect(formatBroken(broken)).toBe('')
  }, 60_000)

  it('checks the documents a reader opens first', () => {
    const files = markdownFiles(REPOSITORY_ROOT)
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/README.md']))
    expect(files.some((f) => f.startsWith('node_modules/') || f.startsWith('dist/'))).toBe(false)
  })

  describe('in a directory with broken links', () => {
    let root: string
    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'hajri-doc-links-'))
      await mkdir(join(root, 'docs'))
      await mkdir(join(root, 'node_modules', 'x'), { recursive: true })
      await writeFile(
        join(root, 'README.md'),
        [
          '# Hajri',
          '',
          '## Quick start (`npm start`)',
          '',
          '- [fine](#quick-start-npm-start) and [fine too](docs/guide.md#set-it-up)',
          '- [a file](code.ts) and [a folder](docs/)',
          '- [a wrong anchor](#quick-stat)',
          '- [a wrong anchor in another file](docs/guide.md#set-it-down)',
          '- [a missing file](docs/missing.md)',
          '- [external](https://example.com/nowhere) is not checked offline',
          '',
        ].join('\n'),
      )
      await writeFile(join(root, 'code.ts'), 'export {}\n')
      await writeFile(
        join(root, 'docs', 'guide.md'),
        '# Guide\n\n## Set it up\n\n[back](../README.md#hajri)\n',
      )
      // Installed packages' documents are not ours to fix.
      await writeFile(join(root, 'node_modules', 'x', 'README.md'), '[broken](#nowhere)\n')
    })
    afterAll(async () => {
      await rm(root, { recursive: true, force: true })
    })

    it('lists each broken link and anchor, with its file and line, and nothing else', async () => {
      const broken = await checkDocLinks(root)
      expect(broken.map((b) => `${b.file}:${b.line}`)).toEqual(['README.md:7', 'README.md:8', 'README.md:9'])
      expect(broken[0]?.message).toMatch(/Cannot find heading for `#quick-stat`/)
      expect(broken[1]?.message).toMatch(/Cannot find heading for `#set-it-down` in `docs\/guide.md`/)
      expect(broken[2]?.message).toMatch(/Cannot find file `docs\/missing.md`/)
    }, 60_000)
  })
})
