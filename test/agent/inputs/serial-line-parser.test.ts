/**
 * Line framing (schema: "\r before it is dropped"). The
 * properties: however the bytes are chunked the frames are the same, and every byte that is not a
 * delimiter or a dropped CR ends up in a frame or a malformed record, never silently lost.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SerialFrame } from '../../../agent/inputs/serial-frame.js'
import { SerialLineParser } from '../../../agent/inputs/serial-line-parser.js'
import { chunked, framingBytes, runFramer } from './serial-test-kit.js'

const parse = (chunks: (string | Uint8Array)[], delimiter = '\n', maxFrameBytes?: number) =>
  runFramer(
    new SerialLineParser({ delimiter, maxFrameBytes }),
    chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)),
  )

const text = (items: SerialFrame[]) =>
  items.map((item) =>
    item.type === 'frame'
      ? item.bytes.toString()
      : `${item.type}${item.type === 'malformed' ? `:${item.reason}` : ''}:${item.length}:${item.sample}`,
  )

describe('SerialLineParser', () => {
  it('splits lines, strips one CR before the delimiter, skips blank lines', async () => {
    expect(text(await parse(['a\r\nb\n\r\n\nc\r\r\n']))).toEqual(['a', 'b', 'c\r'])
  })

  it('joins a line and a CR-LF split across chunks', async () => {
    expect(text(await parse(['ab', 'c\r', '\nd', 'ef\r', '\n']))).toEqual(['abc', 'def'])
  })

  it('finds a multi-byte delimiter split across chunks', async () => {
    expect(text(await parse(['one#', '#two', '#', '#three##'], '##'))).toEqual(['one', 'two', 'three'])
  })

  it('reports what is left at the end as a partial frame', async () => {
    expect(text(await parse(['done\nhalf a lin', 'e\r']))).toEqual([
      'done',
      'malformed:partial:11:half a line',
    ])
  })

  it('counts an oversize line, keeps only a sample, and reads the next line', async () => {
    const long = 'L'.repeat(100)
    const out = await parse([long.slice(0, 30), long.slice(30), '\r\nok\n'], '\n', 20)
    expect(text(out)).toEqual([`malformed:oversize:100:${'L'.repeat(64)}`, 'ok'])
  })

  it('counts an endless line without keeping it', async () => {
    const parser = new SerialLineParser({ delimiter: '\n', maxFrameBytes: 100 })
    const out: SerialFrame[] = []
    parser.on('data', (item: SerialFrame) => out.push(item))
    for (let i = 0; i < 1000; i++) {
      parser.write(Buffer.alloc(1024, 0x41))
      // Bounded memory: the parser holds no more than a delimiter's worth of the line.
      expect((parser as unknown as { pending: Buffer }).pending.length).toBeLessThanOrEqual(1)
    }
    parser.end('\nnext\n')
    await new Promise((resolve) => parser.on('end', resolve))
    expect(text(out)).toEqual([`malformed:oversize:${1000 * 1024}:${'A'.repeat(64)}`, 'next'])
  })

  it('gives the same result however the bytes are chunked', async () => {
    await fc.assert(
      fc.asyncProperty(
        framingBytes(400),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('\n', '\r\n', '##'),
        async (bytes, cuts, delimiter) => {
          const whole = await parse([bytes], delimiter, 16)
          expect(await parse(chunked(bytes, cuts), delimiter, 16)).toEqual(whole)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('accounts for every byte that is not a delimiter or a dropped CR', async () => {
    await fc.assert(
      fc.asyncProperty(
        framingBytes(400),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('\n', '\r\n', '#'),
        async (bytes, cuts, delimiter) => {
          const out = await parse(chunked(bytes, cuts), delimiter, 16)
          const expected = splitBuffer(Buffer.from(bytes), Buffer.from(delimiter)).reduce(
            (sum, line) => sum + line.length - (line.at(-1) === 0x0d ? 1 : 0),
            0,
          )
          const counted = out.reduce(
            (sum, item) => sum + (item.type === 'frame' ? item.bytes.length : item.length),
            0,
          )
          expect(counted).toBe(expected)
          for (const item of out) {
            if (item.type !== 'frame') continue
            expect(item.bytes.length).toBeGreaterThan(0)
            expect(item.bytes.length).toBeLessThanOrEqual(16)
            expect(item.bytes.includes(Buffer.from(delimiter))).toBe(false)
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('gives back exactly the lines a device sent', async () => {
    const line = fc
      .string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' })
      .filter((s) => !s.includes('\n') && !s.endsWith('\r'))
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l, i) => `${l}${i % 2 ? '\r\n' : '\n'}`).join(''))
          const out = await parse(chunked(bytes, cuts), '\n', 40)
          expect(text(out)).toEqual(lines)
        },
      ),
      { numRuns: 200 },
    )
  })
})

function splitBuffer(bytes: Buffer, delimiter: Buffer): Buffer[] {
  const parts: Buffer[] = []
  let start = 0
  for (let end = bytes.indexOf(delimiter, start); end !== -1; end = bytes.indexOf(delimiter, start)) {
    parts.push(bytes.subarray(start, end))
    start = end + delimiter.length
  }
  parts.push(bytes.subarray(start))
  return parts
}
