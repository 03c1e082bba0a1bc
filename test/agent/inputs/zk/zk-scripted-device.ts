/**
 * A tiny scripted ZK terminal for the client tests, written from the protocol notes (framing,
 * RFC 1071 checksum, session, bulk read, events) rather than from the library, so that a mistake
 * the two shared could not hide: it has its own checksum, framing and parsing. It follows a script
 * of expected requests and canned answers, and records what was wrong rather than guessing. Not a
 * test file itself.
 */
import dgram from 'node:dgram'
import net from 'node:net'

export const CMD = {
  CONNECT: 1000,
  EXIT: 1001,
  ENABLEDEVICE: 1002,
  DISABLEDEVICE: 1003,
  GET_VERSION: 1100,
  AUTH: 1102,
  OPTIONS_RRQ: 11,
  CLEAR_ATTLOG: 15,
  GET_FREE_SIZES: 50,
  GET_TIME: 201,
  SET_TIME: 202,
  REG_EVENT: 500,
  PREPARE_DATA: 1500,
  DATA: 1501,
  FREE_DATA: 1502,
  DATA_WRRQ: 1503,
  DATA_RDY: 1504,
  ACK_OK: 2000,
  ACK_ERROR: 2001,
  ACK_UNAUTH: 2005,
} as const

export interface Packet {
  command: number
  session: number
  reply: number
  data: Buffer
}

/** What the device sends or does when a step's request has come. */
export type Action =
  /** A packet; session and reply number default to the device's session and the request's number. */
  | { send: number; data?: Buffer | string; session?: number; reply?: number; badChecksum?: boolean }
  /** A real-time event: cmd 500, the event code in the session field, reply number 0. */
  | { event: number; data: Buffer | string }
  /** TCP only: these bytes of the next packet, then the connection is destroyed. */
  | { cutAfter: number; send: number; data: Buffer | string }
  /** Close the connection (TCP), or fall silent (UDP). */
  | { drop: true }

export interface Step {
  /** The request's command. */
  expect: number
  /** Its data, hex, when it matters. */
  data?: string
  /** An event acknowledgment carries the event's reply number rather than the next one. */
  reply?: number
  answer: Action[]
}

const hex = (data: Buffer | string | undefined) =>
  data === undefined ? Buffer.alloc(0) : typeof data === 'string' ? Buffer.from(data, 'hex') : data

/** RFC 1071 over little-endian words, summed then folded, the checksum field counted as zero. */
function checksum(payload: Buffer): number {
  let sum = 0
  for (let i = 0; i < payload.length; i += 2) {
    if (i === 2) continue
    sum += (payload[i] ?? 0) + 256 * (payload[i + 1] ?? 0)
  }
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000)
  return 0xffff - sum
}

export function payloadOf(p: Packet, badChecksum = false): Buffer {
  const out = Buffer.alloc(8 + p.data.length)
  out.writeUInt16LE(p.command, 0)
  out.writeUInt16LE(p.session, 4)
  out.writeUInt16LE(p.reply, 6)
  p.data.copy(out, 8)
  out.writeUInt16LE(checksum(out) ^ (badChecksum ? 1 : 0), 2)
  return out
}

function parse(payload: Buffer): Packet | string {
  if (payload.length < 8) return `short packet ${payload.toString('hex')}`
  if (checksum(payload) !== payload.readUInt16LE(2)) return `bad checksum in ${payload.toString('hex')}`
  return {
    command: payload.readUInt16LE(0),
    session: payload.readUInt16LE(4),
    reply: payload.readUInt16LE(6),
    data: payload.subarray(8),
  }
}

function tcpFrame(payload: Buffer): Buffer {
  const prefix = Buffer.from([0x50, 0x50, 0x82, 0x7d, 0, 0, 0, 0])
  prefix.writeUInt32LE(payload.length, 4)
  return Buffer.concat([prefix, payload])
}

export interface ScriptedDevice {
  port: number
  /** Every request received, in order. */
  received: Packet[]
  /** What did not match the script (empty when the client behaved). */
  problems: string[]
  /** Resolves when the last step's actions are done. */
  finished: Promise<void>
  /** Resolves when the client's connection or datagrams stop (TCP: the socket closed). */
  clientGone: Promise<void>
  close(): Promise<void>
}

export interface DeviceOptions {
  kind: 'tcp' | 'udp'
  session: number
  steps: Step[]
  /** TCP: each answer's bytes are written in small pieces, so the client sees split frames. */
  split?: boolean
}

/** Starts a device on 127.0.0.1 that plays the script for the first client. */
export async function startScriptedDevice(options: DeviceOptions): Promise<ScriptedDevice> {
  const received: Packet[] = []
  const problems: string[] = []
  let finish!: () => void
  const finished = new Promise<void>((resolve) => {
    finish = resolve
  })
  let gone!: () => void
  const clientGone = new Promise<void>((resolve) => {
    gone = resolve
  })
  const steps = [...options.steps]
  let stopped = false
  let nextReply = 0
  if (steps.length === 0) finish()

  /** Plays one request against the script; returns the payloads to send and whether to drop. */
  const play = (payload: Buffer): { out: Buffer[]; drop: boolean; cut?: Buffer } => {
    const none = { out: [], drop: false }
    if (stopped) return none
    const packet = parse(payload)
    if (typeof packet === 'string') {
      problems.push(packet)
      stopped = true
      return none
    }
    received.push(packet)
    const step = steps.shift()
    // After the script, CMD_EXIT is answered, so that a test can close its client quickly.
    if (!step && packet.command === CMD.EXIT) {
      return {
        out: [
          payloadOf({
            command: CMD.ACK_OK,
            session: options.session,
            reply: packet.reply,
            data: Buffer.alloc(0),
          }),
        ],
        drop: false,
      }
    }
    if (!step) {
      problems.push(`unexpected request ${packet.command} after the script ended`)
      stopped = true
      return none
    }
    const wantReply = step.reply ?? nextReply
    const wantSession = step.expect === CMD.CONNECT ? 0 : options.session
    const wrong: string[] = []
    if (packet.command !== step.expect) wrong.push(`command ${packet.command} instead of ${step.expect}`)
    if (step.data !== undefined && packet.data.toString('hex') !== step.data) {
      wrong.push(`data ${packet.data.toString('hex')} instead of ${step.data}`)
    }
    if (packet.reply !== wantReply) wrong.push(`reply number ${packet.reply} instead of ${wantReply}`)
    if (packet.session !== wantSession) wrong.push(`session ${packet.session} instead of ${wantSession}`)
    if (wrong.length > 0) {
      problems.push(`request ${received.length}: ${wrong.join(', ')}`)
      stopped = true
      return none
    }
    if (step.reply === undefined) nextReply = (nextReply + 1) % 0x10000
    const out: Buffer[] = []
    let drop = false
    let cut: Buffer | undefined
    for (const action of step.answer) {
      if ('drop' in action) drop = true
      else if ('event' in action) {
        out.push(
          payloadOf({ command: CMD.REG_EVENT, session: action.event, reply: 0, data: hex(action.data) }),
        )
      } else if ('cutAfter' in action) {
        const frame = tcpFrame(
          payloadOf({
            command: action.send,
            session: options.session,
            reply: packet.reply,
            data: hex(action.data),
          }),
        )
        cut = frame.subarray(0, action.cutAfter)
        drop = true
      } else {
        out.push(
          payloadOf(
            {
              command: action.send,
              session: action.session ?? options.session,
              reply: action.reply ?? packet.reply,
              data: hex(action.data),
            },
            action.badChecksum,
          ),
        )
      }
    }
    if (steps.length === 0) finish()
    return { out, drop, ...(cut ? { cut } : {}) }
  }

  if (options.kind === 'udp') {
    const socket = dgram.createSocket('udp4')
    socket.on('message', (message, remote) => {
      const { out, drop } = play(message)
      for (const payload of out) socket.send(payload, remote.port, remote.address)
      if (drop) stopped = true
    })
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
    return {
      port: socket.address().port,
      received,
      problems,
      finished,
      clientGone,
      close: () =>
        new Promise<void>((resolve) => {
          gone()
          socket.close(() => resolve())
        }),
    }
  }

  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    let buffer = Buffer.alloc(0)
    socket.on('close', () => {
      sockets.delete(socket)
      gone()
    })
    socket.on('error', () => undefined)
    socket.on('data', async (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 8) {
        if (buffer.readUInt32BE(0) !== 0x5050827d) {
          problems.push(`bad magic ${buffer.subarray(0, 4).toString('hex')}`)
          socket.destroy()
          return
        }
        const length = buffer.readUInt32LE(4)
        if (buffer.length < 8 + length) break
        const payload = buffer.subarray(8, 8 + length)
        buffer = buffer.subarray(8 + length)
        const { out, drop, cut } = play(payload)
        // Merged: all of a step's packets in one write. Split: a few bytes at a time.
        const bytes = Buffer.concat([...out.map(tcpFrame), ...(cut ? [cut] : [])])
        if (options.split) {
          for (let i = 0; i < bytes.length; i += 5) {
            socket.write(bytes.subarray(i, i + 5))
            await new Promise<void>((resolve) => setImmediate(resolve))
          }
        } else if (bytes.length > 0) socket.write(bytes)
        if (drop) {
          socket.end()
          socket.destroySoon()
          return
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as net.AddressInfo
  return {
    port: address.port,
    received,
    problems,
    finished,
    clientGone,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
