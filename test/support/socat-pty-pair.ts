/**
 * A serial cable for tests: a socat pseudo-terminal pair. The agent opens `devPath` with the real
 * serialport bindings; the test (or `hajri-agent simulate --serial`) plays the device on `hostPath`.
 * Stopping socat removes both links, as unplugging a USB adapter removes its port; starting a new
 * pair in the same directory plugs it back in.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'

export interface SocatPtyPair {
  /** The end the agent opens as its serial port. */
  devPath: string
  /** The device's end. */
  hostPath: string
  /** SIGTERM: socat removes its links, as when an adapter is unplugged. */
  stop(): Promise<void>
}

/** Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` with links in `dir`; resolves once it relays. */
export async function startSocatPtyPair(dir: string): Promise<SocatPtyPair> {
  const devPath = join(dir, 'dev')
  const hostPath = join(dir, 'host')
  const child: ChildProcess = spawn(
    'socat',
    ['-d', '-d', `pty,raw,echo=0,link=${devPath}`, `pty,raw,echo=0,link=${hostPath}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }
  let log = ''
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on('data', (data: Buffer) => {
        log += data.toString()
        if (log.includes('starting data transfer loop')) resolve()
      })
      child.once('error', reject)
      child.once('exit', (code) => reject(new Error(`socat exited (${code}) before it was ready: ${log}`)))
    })
  } catch (err) {
    await stop()
    throw err
  }
  return { devPath, hostPath, stop }
}
