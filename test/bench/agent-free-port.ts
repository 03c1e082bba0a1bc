import net from 'node:net'

/**
 * A loopback port nothing listens on right now. The agent's configuration wants real ports (its
 * status listener is found by its port, so 0 is refused), hence asking the system for one and
 * handing it over; another process could take it meanwhile, which on a bench machine it does not.
 */
export function freePort(): Promise<number> {
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
