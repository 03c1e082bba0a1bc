/**
 * Byte sizes as IT staff write them (`spool.maxBytes: 2GiB`). The units follow IEC 80000-13:
 * KiB, MiB, GiB, TiB are powers of 1024 (2GiB = 2 × 1024³ bytes), and KB, MB, GB, TB powers of
 * 1000 (500MB = 500 × 1000² bytes), as disks and `df -H` count. Units are case-sensitive, since
 * `mb` could be megabits. A bare number is bytes.
 */

const UNITS: Readonly<Record<string, bigint>> = {
  B: 1n,
  KB: 1000n,
  MB: 1000n ** 2n,
  GB: 1000n ** 3n,
  TB: 1000n ** 4n,
  KiB: 1024n,
  MiB: 1024n ** 2n,
  GiB: 1024n ** 3n,
  TiB: 1024n ** 4n,
}

const SIZE = /^(\d+)(?:\.(\d+))?\s*([KMGT]i?B|B)?$/

type ByteSizeResult = { ok: true; bytes: number } | { ok: false; message: string }

/**
 * Parses `2GiB`, `1.5 GB`, `1048576` or the number 1048576 into bytes. Computed in integers, so
 * `0.1KB` is exactly 100; a size that is not a whole number of bytes, or beyond what a JavaScript
 * number holds exactly, is refused.
 */
export function parseByteSize(value: number | string): ByteSizeResult {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0
      ? { ok: true, bytes: value }
      : { ok: false, message: 'must be a whole number of bytes' }
  }
  const m = SIZE.exec(value.trim())
  const unit = UNITS[m?.[3] ?? 'B']
  if (!m || unit === undefined) {
    return { ok: false, message: 'must be a size such as 2GiB, 512MiB or 500MB, or a number of bytes' }
  }
  const fraction = m[2] ?? ''
  const scale = 10n ** BigInt(fraction.length)
  const scaled = BigInt(`${m[1]}${fraction}`) * unit
  if (scaled % scale !== 0n) return { ok: false, message: 'is not a whole number of bytes' }
  const bytes = scaled / scale
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: 'is too large' }
  return { ok: true, bytes: Number(bytes) }
}

/** `2147483648` → `2 GiB`, `500000000` → `476.8 MiB`: for summaries. */
export function formatByteSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let i = 0
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024
    i++
  }
  return i === 0 ? `${bytes} bytes` : `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[i]}`
}
