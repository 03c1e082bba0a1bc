import dgram from 'node:dgram'
import net from 'node:net'
import { DEFAULT_MAX_PACKET_BYTES, frameZkTcp, ZkTcpReassembler } from './zk-packet.js'
import { ZkProtocolError } from './zk-protocol-error.js'

export type ZkTransportKind = 'tcp' | 'udp'

export interface ZkTransportOptions {
  host: string
  port: number
  kind: ZkTransportKind
  /** A longer payload (a TCP frame's length, a datagram) ends the connection. */
  maxPacketBytes?: number
  /** How long a TCP connection may take to open. */
  connectTimeoutMs?: number
}

export interface ZkTransportHandlers {
  /** One whole payload: a datagram, or the content of one TCP frame. */
  onPayload(payload: Buffer): void
  /** Called once: with no error after close(), with one when the peer or the network ended it. */
  onClose(error: ZkProtocolError | undefined): void
}

/** Payloads in and out over TCP (framed, ZK protocol `50 50 82 7D`) or UDP (a datagram each). */
export interface ZkTransport {
  readonly kind: ZkTransportKind
  send(payload: Buffer): void
  close(): void
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

export function openZkTransport(
  options: ZkTransportOptions,
  handlers: ZkTransportHandlers,
): Promise<ZkTransport> {
  return options.kind === 'tcp' ? openTcp(options, handlers) : openUdp(options, handlers)
}

function unreachable(options: ZkTransportOptions, cause: unknown): ZkProtocolError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new ZkProtocolError(
    'zk_unreachable',
    `could not reach ${options.host}:${options.port} over ${options.kind.toUpperCase()}: ${reason}`,
    { cause },
  )
}

function openTcp(options: ZkTransportOptions, handlers: ZkTransportHandlers): Promise<ZkTransport> {
  const reassembler = new ZkTcpReassembler({
    maxPacketBytes: options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES,
  })
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: options.host, port: options.port })
    let connected = false
    let closing = false
    let failure: ZkProtocolError | undefined
    const timer = setTimeout(() => {
      socket.destroy(
        new Error(`no connection after ${options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS} ms`),
      )
    }, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS)
    const end = (error: ZkProtocolError) => {
      failure ??= error
      socket.destroy()
    }
    socket.once('connect', () => {
      clearTimeout(timer)
      connected = true
      socket.setNoDelay(true)
      resolve({
        kind: 'tcp',
        send: (payload) => {
          if (!socket.destroyed) socket.write(frameZkTcp(payload))
        },
        close: () => {
          closing = true
          socket.destroy()
        },
      })
    })
    socket.on('data', (chunk: Buffer) => {
      const { payloads, error } = reassembler.push(chunk)
      for (const payload of payloads) {
        if (socket.destroyed) return
        handlers.onPayload(payload)
      }
      if (error) end(error)
    })
    socket.on('error', (error) => {
      if (!connected) return
      failure ??= new ZkProtocolError('zk_connection_closed', `the TCP connection broke: ${error.message}`, {
        cause: error,
      })
    })
    socket.on('close', () => {
      clearTimeout(timer)
      if (!connected) {
        reject(unreachable(options, failure ?? socket.errored ?? 'the connection closed'))
        return
      }
      if (closing && failure === undefined) handlers.onClose(undefined)
      else {
        const midPacket = reassembler.bufferedBytes > 0 ? ' in the middle of a packet' : ''
        handlers.onClose(
          failure ??
            new ZkProtocolError('zk_connection_closed', `the device closed the TCP connection${midPacket}`),
        )
      }
    })
  })
}

function openUdp(options: ZkTransportOptions, handlers: ZkTransportHandlers): Promise<ZkTransport> {
  const maxPacketBytes = options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(options.host) ? 'udp6' : 'udp4')
    let connected = false
    let closed = false
    const close = (error: ZkProtocolError | undefined) => {
      if (closed) return
      closed = true
      socket.close()
      handlers.onClose(error)
    }
    socket.on('error', (error) => {
      if (!connected) {
        closed = true
        socket.close()
        reject(unreachable(options, error))
        return
      }
      // A connected UDP socket reports an ICMP port unreachable as an error on the next send.
      const refused = (error as NodeJS.ErrnoException).code === 'ECONNREFUSED'
      close(
        refused
          ? unreachable(options, error)
          : new ZkProtocolError('zk_connection_closed', `the UDP socket failed: ${error.message}`, {
              cause: error,
            }),
      )
    })
    // Connected, so the kernel passes on only the device's datagrams.
    socket.connect(options.port, options.host, () => {
      connected = true
      resolve({
        kind: 'udp',
        send: (payload) => {
          if (!closed) socket.send(payload)
        },
        close: () => close(undefined),
      })
    })
    socket.on('message', (payload: Buffer) => {
      if (closed) return
      if (payload.length > maxPacketBytes) {
        close(
          new ZkProtocolError(
            'zk_packet_too_large',
            `a ZK datagram of ${payload.length} bytes is more than the ${maxPacketBytes} allowed`,
          ),
        )
        return
      }
      handlers.onPayload(payload)
    })
  })
}
