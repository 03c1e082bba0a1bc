/**
 * The ZK 4370 packet checksum: the Internet checksum of RFC 1071 §1 over the payload read as
 * little-endian 16-bit words, an odd last byte padded with zero, with the checksum field itself
 * counted as zero (`skipOffset`, the checksum's offset in the header). Some public clients reach
 * the same bytes through two quirks that cancel; this is the plain algorithm.
 */
export function zkChecksum(payload: Uint8Array, skipOffset = -1): number {
  let sum = 0
  for (let i = 0; i < payload.length; i += 2) {
    if (i === skipOffset) continue
    const low = payload[i] ?? 0
    const high = payload[i + 1] ?? 0
    sum += low | (high << 8)
    // RFC 1071 §4.1: fold the carries back in as they come, so the sum stays a small integer.
    if (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16)
  }
  return ~sum & 0xffff
}
