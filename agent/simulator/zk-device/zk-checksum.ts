/**
 * The checksum of a ZK payload (command, checksum, session, reply, data): the Internet checksum of
 * RFC 1071 §4.1 over little-endian 16-bit words, the checksum field counted as zero and an odd last
 * byte padded with a zero. (pyzk and node-zklib reach the same value by two quirks that cancel; the
 * research notes warn not to port them.)
 */
export function zkChecksum(payload: Uint8Array): number {
  let sum = 0
  for (let i = 0; i + 1 < payload.length; i += 2) {
    // Bytes 2-3 are the checksum field itself.
    if (i !== 2) sum += payload[i]! | (payload[i + 1]! << 8)
  }
  if (payload.length % 2 === 1) sum += payload[payload.length - 1]!
  // RFC 1071 §4.1: fold the carries back in, then take the one's complement.
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16)
  return ~sum & 0xffff
}
