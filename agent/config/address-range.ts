import { BlockList, isIP } from 'node:net'

/** One entry of an address list: a single address, or a subnet in CIDR form (RFC 4632 §3.1). */
interface AddressRange {
  address: string
  family: 'ipv4' | 'ipv6'
  /** Prefix length; 32 or 128 for a single address. */
  prefix: number
}

/** `192.168.10.25`, `192.168.10.0/24`, `fd00::/8`; undefined for anything else (host names included). */
export function parseAddressRange(text: string): AddressRange | undefined {
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(text.trim())
  if (!m) return undefined
  const address = m[1] as string
  const version = isIP(address)
  if (version === 0) return undefined
  const family = version === 4 ? 'ipv4' : 'ipv6'
  const max = version === 4 ? 32 : 128
  const prefix = m[2] === undefined ? max : Number(m[2])
  if (prefix > max) return undefined
  return { address, family, prefix }
}

/**
 * Whether an address is in any of the ranges. Node's BlockList compares IPv4-mapped IPv6 addresses
 * (`::ffff:192.168.10.25`, what a dual-stack listener reports) with IPv4 rules too.
 */
export function addressMatcher(ranges: readonly string[]): (address: string) => boolean {
  const list = new BlockList()
  for (const text of ranges) {
    const range = parseAddressRange(text)
    if (!range) throw new Error(`"${text}" is not an address or a subnet`)
    if (range.prefix === (range.family === 'ipv4' ? 32 : 128)) list.addAddress(range.address, range.family)
    else list.addSubnet(range.address, range.prefix, range.family)
  }
  return (address) => {
    const version = isIP(address)
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }
}
