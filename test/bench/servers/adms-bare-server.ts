import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { countLines as countRecords } from '../../../agent/inputs/adms/adms-request.js'
import type { ServerMessage } from '../server-process.js'

/** Lines holding something other than spaces, tabs and CRs (the agent's own count, without a cap). */
const countLines = (body: Buffer) => countRecords(body, Number.MAX_SAFE_INTEGER)

/**
 * The baseline of agent-adms: a bare node:http server (its defaults, no framework, as the agent's
 * ADMS listener is) that reads a request's body whole, counts its non-blank lines and answers
 * `OK: <n>` (text/plain), as an ADMS server acknowledges an ATTLOG upload, storing nothing. It does
 * not look at the URL or the method. What the agent costs beyond it is routing the request to its
 * terminal, parsing each record, making it a punch and writing the lot durably (fsync) before the
 * answer. Speaks ServerProcess' IPC.
 */
const tell = (message: ServerMessage) => process.send?.(message)

try {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = `OK: ${countLines(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))}`
      response.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) })
      response.end(body)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const stop = () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  // A parent that dies takes the server with it.
  process.once('disconnect', stop)
  tell({ type: 'listening', url: `http://127.0.0.1:${port}` })
} catch (err) {
  tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  process.exit(1)
}
