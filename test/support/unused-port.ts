import net from 'node:net'

/**
 * A loopback port nothing listens on right now: the system's choice, closed again at once. For a
 * listener that must be given a real port (the agent's status listener is found by its port, so 0
 * is refused), and for an address where a connection is refused. Another process could take it
 * meanwhile, which on a test machine it does not. (A port the agent opens again after every kill
 * comes from e2e-kit.ts `freePort`, away from the system's ephemeral range.)
 */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port'))))
    })
  })
}
