import net from 'node:net'
import { parseListenAddress } from '../config/listen-address.js'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import type { RunningAgent } from './running-agent.js'

/** Binds host:port and closes it again at once: free, or the error the agent would get. */
export function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)))
  })
}

/**
 * A listener the agent opens (the embedded broker, the ADMS listener, the status listener) can
 * take its address: the port is free, or held by this very agent, running. `ownedBy` says whether
 * the agent that answers holds it (for the status listener: it answered there).
 */
export async function checkListenPort(
  listen: string,
  agent: Promise<RunningAgent>,
  what: string,
  ownedBy: (agent: RunningAgent & { running: true }) => boolean = () => true,
): Promise<CheckOutcome> {
  const address = parseListenAddress(listen)
  if (!address) return fail(`${listen} is not host:port`, 'fix the setting (hajri-agent check-config)')
  const err = await tryListen(address.host, address.port)
  if (err === undefined) return pass(`${listen} is free: the agent can listen there`)
  if (err.code === 'EADDRINUSE') {
    const running = await agent
    if (running.running && ownedBy(running)) {
      return pass(
        `${listen} is in use by the running agent (site ${running.status.agent.site}, pid ${running.status.agent.pid})`,
      )
    }
    return fail(
      `${listen} is in use by another program${running.running ? '' : ' (the agent is not running)'}`,
      `find it (Linux: sudo ss -ltnp 'sport = :${address.port}'; Windows: netstat -ano | findstr :${address.port}) and stop it, or give the ${what} another port`,
    )
  }
  if (err.code === 'EACCES') {
    return fail(
      `${listen} may not be taken by this user (${describeError(err)})`,
      `ports below 1024 need privileges: use a port above 1023 for the ${what}, or run the agent's service with the capability to bind it`,
    )
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') {
    return fail(
      `${address.host} is not an address of this machine (${describeError(err)})`,
      `use one of this machine's addresses (ip addr / ipconfig), or 0.0.0.0 for all, for the ${what}`,
    )
  }
  return fail(`${listen} cannot be taken (${describeError(err)})`, `check the ${what}'s address`)
}
