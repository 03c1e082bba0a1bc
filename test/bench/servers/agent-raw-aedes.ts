import net, { type AddressInfo } from 'node:net'
import { Aedes } from 'aedes'
import type { ServerMessage } from '../server-process.js'

/**
 * The baseline of agent-ingest: a bare aedes broker (`new Aedes()`, no hooks, its in-memory
 * persistence) on a plain net server, as aedes' own README starts one. It PUBACKs a QoS 1 PUBLISH
 * as soon as aedes has routed it, with no one subscribed; what the agent costs beyond it is
 * checking, parsing and durably spooling each punch before the PUBACK. Speaks ServerProcess' IPC.
 */
const tell = (message: ServerMessage) => process.send?.(message)

try {
  const broker = new Aedes()
  await broker.listen()
  const server = net.createServer((socket) => broker.handle(socket))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const stop = () => {
    server.close()
    broker.close(() => process.exit(0))
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  // A parent that dies takes the broker with it.
  process.once('disconnect', stop)
  tell({ type: 'listening', url: `mqtt://127.0.0.1:${port}` })
} catch (err) {
  tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  process.exit(1)
}
