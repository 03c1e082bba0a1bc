import { BlockList, isIP } from 'node:net'

/**
 * This machine's own addresses (RFC 1122 §3.2.1.3: 127.0.0.0/8; RFC 4291 §2.5.3: ::1), the
 * IPv4-mapped form of the first (what a dual-stack socket reports), and the name `localhost`
 * (RFC 6761 §6.3: it always resolves to loopback).
 */
const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6')

/**
 * Whether `host` (a name or address, an IPv6 address with or without its brackets) can only be
 * reached from this machine. What is not loopback is treated as reachable from the network.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost' || bare === 'localhost.') return true
  const version = isIP(bare)
  return version !== 0 && LOOPBACK.check(bare, version === 4 ? 'ipv4' : 'ipv6')
}
