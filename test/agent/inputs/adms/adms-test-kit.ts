/**
 * What the ADMS input tests stand on: the input on a free loopback port in front of a real intake,
 * spool and dead letters (TestAgent), a log kept in memory, and raw HTTP requests as a terminal
 * makes them (node:http, a connection per request, headers exactly as given).
 */
import http from 'node:http'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { AdmsConfig, DeviceConfig } from '../../../../agent/config/schema.js'
import type { AgentEvents } from '../../../../agent/events.js'
import { AdmsInput, type AdmsInputOptions } from '../../../../agent/inputs/adms/adms-input.js'
import type { PunchSink } from '../../../../agent/intake/punch-sink.js'
import { startTestAgent, type TestAgent } from '../mqtt-test-agent.js'

export const SERIAL = 'CJDE193560303'

export const admsDevice = (
  id: string,
  serialNumber: string,
  more: Partial<DeviceConfig> = {},
): DeviceConfig => ({
  id,
  adms: { serialNumber },
  ...more,
})

export const ADMS_DEFAULTS: AdmsConfig = {
  listen: '127.0.0.1:0',
  pollSeconds: 10,
  errorDelaySeconds: 30,
  realtime: true,
  maxBodyBytes: 2 * 1024 * 1024,
  maxConnections: 256,
}

export interface AdmsRig {
  agent: TestAgent
  input: AdmsInput
  port: number
  /** Every log line, parsed. */
  logs: { level: number; msg: string; [key: string]: unknown }[]
  requests: AgentEvents['admsRequest'][]
  restart(): Promise<void>
  close(): Promise<void>
}

export async function startAdmsRig(
  options: {
    devices?: DeviceConfig[]
    config?: Partial<AdmsConfig>
    sink?: (agent: TestAgent) => PunchSink
    input?: Partial<AdmsInputOptions>
    maxBytes?: number
  } = {},
): Promise<AdmsRig> {
  const devices = options.devices ?? [admsDevice('gate-1', SERIAL)]
  const agent = await startTestAgent(devices, { maxBytes: options.maxBytes })
  const logs: AdmsRig['logs'] = []
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line))
        done()
      },
    }),
  )
  const requests: AgentEvents['admsRequest'][] = []
  agent.events.on('admsRequest', (e) => {
    requests.push(e)
  })
  const make = () =>
    new AdmsInput({
      config: { ...ADMS_DEFAULTS, ...options.config },
      devices,
      siteTimeZone: 'Asia/Kolkata',
      spoolDir: join(agent.dir, 'spool'),
      sink: options.sink?.(agent) ?? agent.intake,
      events: agent.events,
      log,
      ...options.input,
    })
  const rig: AdmsRig = {
    agent,
    input: make(),
    port: 0,
    logs,
    requests,
    async restart() {
      await rig.input.stop()
      rig.input = make()
      await rig.input.start()
      rig.port = rig.input.address()?.port ?? 0
    },
    async close() {
      await rig.input.stop()
      await agent.close()
    },
  }
  await rig.input.start()
  rig.port = rig.input.address()?.port ?? 0
  return rig
}

export interface RawReply {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** One request on a connection of its own, as terminals make them; a refused connection rejects. */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string | number> = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          'User-Agent': 'iClock Proxy/1.09',
          Connection: 'close',
          // Chunked when asked (Transfer-Encoding given): then no length up front.
          ...(body !== undefined && headers['Transfer-Encoding'] === undefined
            ? { 'Content-Length': Buffer.byteLength(body) }
            : {}),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (c: Buffer) => chunks.push(c))
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        )
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** An ATTLOG line with `fields` fields (5, 7, 9 or 12), as firmware of each generation writes them. */
export function attlogLine(pin: string, wallTime: string, status: number, fields = 7): string {
  const all = [
    pin,
    wallTime,
    String(status),
    '1',
    '0',
    '0',
    '0',
    '0',
    '36.5',
    '97.7',
    '+19800',
    'eyJncHMiOiIifQ==',
  ]
  return all.slice(0, fields).join('\t')
}
