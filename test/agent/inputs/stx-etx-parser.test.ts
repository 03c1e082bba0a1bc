/**
 * STX/ETX framing (schema: "Records between STX (0x02) and ETX
 * (0x03)"). Bytes outside are noise, counted; an unterminated or oversize frame is malformed; the
 * result does not depend on how the bytes were chunked, and no byte is silently lost.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SerialFrame } from '../../../agent/inputs/serial-frame.js'
import { ETX, STX, StxEtxParser } from '../../../agent/inputs/stx-etx-parser.js'
import { chunked, framingBytes, runFramer } from './serial-test-kit.js'

const parse = (chunks: (string | Uint8Array)[], maxFrameBytes?: number) =>
  runFramer(
    new StxEtxParser({ maxFrameBytes }),
    chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'latin1') : c)),
  )

const text = (items: SerialFrame[]) =>
  items.map((item) =>
    item.type === 'frame'
      ? item.bytes.toString('latin1')
      : `${item.type}${item.type === 'malformed' ? `:${item.reason}` : ''}:${item.length}:${item.sample.toString('latin1')}`,
  )

describe('StxEtxParser', () => {
  it('takes what is between STX and ETX, across chunks', async () => {
    expect(text(await parse(['\x02one\x03\x02t', 'w', 'o\x03', '\x02', 'three\x03']))).toEqual([
      'one',
      'two',
      'three',
    ])
  })

  it('counts bytes outside STX..ETX as noise, reported when the next frame starts', async () => {
    expect(text(await parse(['junk\x03\x02a\x03\r\n', 'more\x02b\x03']))).toEqual([
      'noise:5:junk\x03',
      'a',
      'noise:6:\r\nmore',
      'b',
    ])
  })

  it('reports a frame whose ETX never came as unterminated, and reads the next', async () => {
    expect(text(await parse(['\x02lost end\x02next\x03']))).toEqual([
      'malformed:unterminated:8:lost end',
      'next',
    ])
  })

  it('reports a frame cut off by the end of the stream as partial, and trailing noise', async () => {
    expect(text(await parse(['\x02a\x03tail']))).toEqual(['a', 'noise:4:tail'])
    expect(text(await parse(['\x02half']))).toEqual(['malformed:partial:4:half'])
  })

  it('skips empty frames and treats a lone STX as noise', async () => {
    expect(text(await parse(['\x02\x03\x02\x02x\x03']))).toEqual(['x', 'noise:1:\x02'])
  })

  it('counts an oversize frame without keeping it, whatever ends it', async () => {
    expect(text(await parse([`\x02${'O'.repeat(30)}`, `${'O'.repeat(70)}\x03\x02ok\x03`], 20))).toEqual([
      `malformed:oversize:100:${'O'.repeat(64)}`,
      'ok',
    ])
    expect(text(await parse([`\x02${'O'.repeat(30)}\x02ok\x03`], 20))).toEqual([
      `malformed:oversize:30:${'O'.repeat(30)}`,
      'ok',
    ])
  })

  it('reports endless noise in bounded runs', async () => {
    const out = await parse([Buffer.alloc(250, 0x55)], 100)
    expect(out.map((item) => (item.type === 'noise' ? item.length : -1))).toEqual([100, 100, 50])
  })

  it('gives the same result however the bytes are chunked', async () => {
    await fc.assert(
      fc.asyncProperty(framingBytes(400), fc.array(fc.nat(), { maxLength: 12 }), async (bytes, cuts) => {
        const whole = await parse([bytes], 16)
        expect(await parse(chunked(bytes, cuts), 16)).toEqual(whole)
      }),
      { numRuns: 300 },
    )
  })

  it('accounts for every byte that is not STX or ETX', async () => {
    await fc.assert(
      fc.asyncProperty(framingBytes(400), fc.array(fc.nat(), { maxLength: 12 }), async (bytes, cuts) => {
        const out = await parse(chunked(bytes, cuts), 16)
        const controls = bytes.filter((b) => b === STX || b === ETX).length
        const counted = out.reduce(
          (sum, item) => sum + (item.type === 'frame' ? item.bytes.length : item.length),
          0,
        )
        // Noise may hold STX or ETX bytes (an ETX outside a frame); frames and malformed ones never.
        expect(counted).toBeGreaterThanOrEqual(bytes.length - controls)
        expect(counted).toBeLessThanOrEqual(bytes.length)
        for (const item of out) {
          if (item.type === 'noise') continue
          const body = item.type === 'frame' ? item.bytes : item.sample
          expect(body.includes(STX) || body.includes(ETX)).toBe(false)
          if (item.type === 'frame') expect(item.bytes.length).toBeLessThanOrEqual(16)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('gives back exactly the frames a device sent between noise', async () => {
    const body = fc
      .uint8Array({ minLength: 1, maxLength: 64 })
      .filter((b) => !b.includes(STX) && !b.includes(ETX))
    const noise = fc.uint8Array({ maxLength: 8 }).filter((b) => !b.includes(STX))
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(noise, body), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (records, cuts) => {
          const bytes = Buffer.concat(
            records.flatMap(([n, b]) => [n, Buffer.from([STX]), b, Buffer.from([ETX])]),
          )
          const out = await parse(chunked(bytes, cuts), 64)
          expect(out.filter((i) => i.type === 'frame').map((i) => Buffer.from(i.bytes))).toEqual(
            records.map(([, b]) => Buffer.from(b)),
          )
          expect(out.filter((i) => i.type === 'malformed')).toEqual([])
          const noiseBytes = out.reduce((sum, i) => sum + (i.type === 'noise' ? i.length : 0), 0)
          expect(noiseBytes).toBe(records.reduce((sum, [n]) => sum + n.length, 0))
        },
      ),
      { numRuns: 200 },
    )
  })
})
