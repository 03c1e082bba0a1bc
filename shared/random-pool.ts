import { randomFillSync } from 'node:crypto'

// One CSPRNG call fills many ids' worth of bytes: a call per id costs more than the id itself on a
// hot path that makes one or two per request (punch ids, request ids).
const pool = Buffer.allocUnsafe(4096)
let offset = pool.length

/** `size` bytes from the CSPRNG (at most 256), served from a pooled buffer refilled as it runs out. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > 256) throw new RangeError('pooledRandomBytes serves at most 256 bytes')
  if (offset + size > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const bytes = Buffer.from(pool.subarray(offset, offset + size))
  offset += size
  return bytes
}
