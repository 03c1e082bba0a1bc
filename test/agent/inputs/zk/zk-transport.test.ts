/**
 * The transports on their own: TCP frames in and out however the segments fall, a broken stream
 * ends the connection with the framing error, UDP carries one payload a datagram, and a port that
 * does not answer is zk_unreachable.
 */
import dgram from 'node:dgram'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'
import { openZkTransport, type ZkTransport } from '../../../../agent/inputs/zk/zk-transport.js'

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

const frame = (payload: Buffer) => {
  const prefix = Buffer.from('5050827d00000000', 'hex')
  prefix.writeUInt32LE(payload.length, 4)
  return Buffer.concat([prefix, payload])
}

interface Seen {
  payloads: Buffer[]
  closed: Promise<ZkProtocolError | undefined>
  arrived: (count: number) => Promise<void>
}

function watcher(): { seen: Seen; handlers: Parameters<typeof openZkTransport>[1] } {
  const payloads: Buffer[] = []
  const waiters: { count: number; resolve: () => void }[] = []
  let closeWith!: (e: ZkProtocolError | undefined) => void
  const closed = new Promise<ZkProtocolError | undefined>((resolve) => {
    closeWith = resolve
  })
  return {
    seen: {
      payloads,
      closed,
      arrived: (count) =>
        payloads.length >= count
          ? Promise.resolve()
          : new Promise((resolve) => waiters.push({ count, resolve })),
    },
    handlers: {
      onPayload: (payload) => {
        payloads.push(payload)
        for (const w of waiters) if (payloads.length >= w.count) w.resolve()
      },
      onClose: (error) => closeWith(error),
    },
  }
}

async function tcpPeer(): Promise<{ port: number; socket: Promise<net.Socket> }> {
  let accept!: (s: net.Socket) => void
  const socket = new Promise<net.Socket>((resolve) => {
    accept = resolve
  })
  const server = net.createServer((s) => {
    s.on('error', () => undefined)
    cleanups.push(() => s.destroy())
    accept(s)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => server.close())
  return { port: (server.address() as net.AddressInfo).port, socket }
}

describe('TCP transport', () => {
  it('frames what it sends, and reads frames split and merged across segments', async () => {
    const peer = await tcpPeer()
    const { seen, handlers } = watcher()
    const transport: ZkTransport = await openZkTransport(
      { host: '127.0.0.1', port: peer.port, kind: 'tcp' },
      handlers,
    )
    const socket = await peer.socket
    const got = new Promise<Buffer>((resolve) => socket.once('data', resolve))
    transport.send(Buffer.from('e80317fc00000000', 'hex'))
    expect((await got).toString('hex')).toBe('5050827d08000000e80317fc00000000')
    const stream = Buffer.concat([
      frame(Buffer.alloc(8, 1)),
      frame(Buffer.alloc(30, 2)),
      frame(Buffer.alloc(9, 3)),
    ])
    socket.write(stream.subarray(0, 3))
    socket.write(stream.subarray(3, 27))
    socket.write(stream.subarray(27))
    await seen.arrived(3)
    expect(seen.payloads).toEqual([Buffer.alloc(8, 1), Buffer.alloc(30, 2), Buffer.alloc(9, 3)])
    transport.close()
    expect(await seen.closed).toBeUndefined()
  })

  it('ends the connection on a wrong magic', async () => {
    const peer = await tcpPeer()
    const { seen, handlers } = watcher()
    await openZkTransport({ host: '127.0.0.1', port: peer.port, kind: 'tcp' }, handlers)
    const socket = await peer.socket
    socket.write(Buffer.concat([frame(Buffer.alloc(8)), Buffer.from('HTTP/1.1 400')]))
    expect(await seen.closed).toMatchObject({ code: 'zk_bad_magic' })
    expect(seen.payloads).toHaveLength(1)
  })

  it('ends the connection on a frame over the bound', async () => {
    const peer = await tcpPeer()
    const { seen, handlers } = watcher()
    await openZkTransport({ host: '127.0.0.1', port: peer.port, kind: 'tcp', maxPacketBytes: 64 }, handlers)
    const socket = await peer.socket
    socket.write(frame(Buffer.alloc(65)).subarray(0, 8))
    expect(await seen.closed).toMatchObject({ code: 'zk_packet_too_large' })
  })

  it('reports the device closing the connection mid-packet', async () => {
    const peer = await tcpPeer()
    const { seen, handlers } = watcher()
    await openZkTransport({ host: '127.0.0.1', port: peer.port, kind: 'tcp' }, handlers)
    const socket = await peer.socket
    socket.end(frame(Buffer.alloc(40)).subarray(0, 20))
    const error = await seen.closed
    expect(error).toMatchObject({ code: 'zk_connection_closed' })
    expect(error?.message).toContain('middle of a packet')
  })

  it('is zk_unreachable when nothing listens', async () => {
    const peer = await tcpPeer()
    for (const cleanup of cleanups.splice(0)) cleanup()
    const { handlers } = watcher()
    await expect(
      openZkTransport({ host: '127.0.0.1', port: peer.port, kind: 'tcp' }, handlers),
    ).rejects.toMatchObject({
      code: 'zk_unreachable',
    })
  })
})

describe('UDP transport', () => {
  it('sends and receives one payload a datagram, and refuses one over the bound', async () => {
    const peer = dgram.createSocket('udp4')
    cleanups.push(() => peer.close())
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve))
    const from = new Promise<dgram.RemoteInfo>((resolve) =>
      peer.once('message', (message, remote) => {
        expect(message.toString('hex')).toBe('e80317fc00000000')
        resolve(remote)
      }),
    )
    const { seen, handlers } = watcher()
    const transport = await openZkTransport(
      { host: '127.0.0.1', port: peer.address().port, kind: 'udp', maxPacketBytes: 100 },
      handlers,
    )
    transport.send(Buffer.from('e80317fc00000000', 'hex'))
    const remote = await from
    peer.send(Buffer.alloc(8, 1), remote.port, remote.address)
    peer.send(Buffer.alloc(12, 2), remote.port, remote.address)
    await seen.arrived(2)
    expect(seen.payloads).toEqual([Buffer.alloc(8, 1), Buffer.alloc(12, 2)])
    peer.send(Buffer.alloc(101), remote.port, remote.address)
    expect(await seen.closed).toMatchObject({ code: 'zk_packet_too_large' })
  })
})
