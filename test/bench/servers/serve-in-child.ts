import type { FastifyInstance } from 'fastify'
import type { ServerMessage } from '../server-process.js'

function tell(message: ServerMessage): void {
  process.send?.(message)
}

/**
 * Listens on an ephemeral loopback port and tells the parent (ServerProcess) where. On the parent's
 * `stop` the app closes and the process exits normally, which is when --cpu-prof writes its profile.
 * A parent that dies takes the server with it: no orphan keeps a port and a database open.
 */
export async function serveInChild(build: () => Promise<FastifyInstance>): Promise<void> {
  let app: FastifyInstance
  let url: string
  try {
    app = await build()
    url = await app.listen({ host: '127.0.0.1', port: 0 })
  } catch (err) {
    tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    process.exit(1)
  }
  const stop = () => {
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('server close failed', err)
        process.exit(1)
      },
    )
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  process.once('disconnect', stop)
  tell({ type: 'listening', url })
}
