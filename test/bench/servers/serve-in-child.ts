import type { FastifyInstance } from 'fastify'
import type { ServerMessage } from '../server-process.js'

function tell(message: ServerMessage): void {
  process.send?.(message)
}

/** A server a child runs: where it listens, and how it stops. */
export interface RunningInChild {
  url: string
  stop(): Promise<void>
}

/**
 * Starts a server and tells the parent (ServerProcess) where it listens. On the parent's `stop`
 * the server stops and the process exits normally, which is when --cpu-prof writes its profile.
 * A parent that dies takes the server with it: no orphan keeps a port and a database open.
 */
export async function runInChild(start: () => Promise<RunningInChild>): Promise<void> {
  let server: RunningInChild
  try {
    server = await start()
  } catch (err) {
    tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    process.exit(1)
  }
  let stopping = false
  // Once: a parent that says stop and then disconnects would otherwise stop the server twice.
  const stop = () => {
    if (stopping) return
    stopping = true
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('server stop failed', err)
        process.exit(1)
      },
    )
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  process.once('disconnect', stop)
  tell({ type: 'listening', url: server.url })
}

/** A Fastify app built by `build`, listening on an ephemeral loopback port (runInChild). */
export function serveInChild(build: () => Promise<FastifyInstance>): Promise<void> {
  return runInChild(async () => {
    const app = await build()
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    return { url, stop: () => app.close() }
  })
}
