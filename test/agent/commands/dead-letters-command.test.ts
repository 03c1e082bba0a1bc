import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseCsv } from 'csv-parse/sync'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Component } from '../../../agent/component.js'
import { EventBus } from '../../../agent/events.js'
import { Gateway } from '../../../agent/gateway.js'
import type { InputContext } from '../../../agent/inputs/input-context.js'
import { runAgentCli } from '../../../agent/main.js'
import type { DeadLetter, SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { StatusServer } from '../../../agent/status/status-server.js'
import { formatInZone, nowMicros } from '../../../shared/time.js'
import { batchAnswer, type ScriptedResult } from '../../support/batch-answer.js'
import { captureCli } from '../../support/cli-capture.js'
import { type Answer, FakeCloud } from '../../support/fake-cloud.js'
import { unusedPort } from '../../support/unused-port.js'

/**
 * `hajri-agent dead-letters list|export|replay`, through a running agent (--url) and, once it is
 * stopped, from its spool directory (--spool). One agent, one story: punches are parked for three
 * reasons, listed, exported, replayed through the agent, the agent stops, and the rest is handled
 * from the directory.
 */

const log = pino({ level: 'silent' })
const CSV_HEADER = 'id,at,deviceId,reason,detail,employeeCode,punchType,punchedAt,punchId,raw'

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10))
}

function cli(...argv: string[]) {
  return captureCli(runAgentCli, argv, { env: {}, cwd: tmpdir() })
}

/** A cloud that refuses punches of employees it does not know (422, with a comma in its detail). */
class RefusingCloud extends FakeCloud {
  readonly unknown = new Set<string>()
  readonly accepted: string[] = []

  override punchAnswer: Answer = (request, res) => {
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
    const sent = request.json as { employeeCode: string } | { punches: { employeeCode: string }[] }
    const refusal = (code: string) => ({
      type: 'about:blank',
      title: 'Employee not found',
      status: 422,
      code: 'employee_not_found',
      detail: `No employee ${code}, add them in the directory.`,
    })
    const outcome = (p: { employeeCode: string }, index: number): ScriptedResult => {
      if (this.unknown.has(p.employeeCode))
        return { index, status: 'rejected', problem: refusal(p.employeeCode) }
      this.accepted.push(p.employeeCode)
      return { index, status: 'created' }
    }
    if ('punches' in sent) return json(200, batchAnswer(sent.punches.map(outcome)))
    const result = outcome(sent, 0)
    if (result.status === 'rejected') return json(422, result.problem)
    json(201, {})
  }
}

class FakeInput implements Component {
  context: InputContext | undefined
  async start() {}
  async stop() {}
}

const cloud = new RefusingCloud()
let dir: string
let spoolDir: string
let gateway: Gateway
let base: string
/** What the agent parked, as its listener serves it. */
let parked: DeadLetter[]
/** A frame no format can read, with a comma, quotes and a carriage return in it. */
const BAD_FRAME = 'not json, "quoted"\rnext'

beforeAll(async () => {
  await cloud.start()
  cloud.unknown.add('E404')
  dir = await mkdtemp(join(tmpdir(), 'hajri-dead-cmd-'))
  spoolDir = join(dir, 'spool')
  const input = new FakeInput()
  gateway = new Gateway(
    {
      site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
      cloud: {
        url: cloud.url,
        clientId: 'hjc_agent',
        clientSecret: 'hjs_secret',
        scope: 'attendance:write',
        timeoutSeconds: 30,
        concurrency: 1,
        batchSize: 500,
      },
      spool: { dir: spoolDir, maxBytes: 1 << 30, chunkPunches: 500 },
      status: { listen: '127.0.0.1:0' },
      log: { level: 'silent' },
      devices: [
        { id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } },
        { id: 'canteen', mqtt: { topic: 'punches/canteen', format: 'json' } },
      ],
    },
    {
      log,
      createInputs: (context) => {
        input.context = context
        return [input]
      },
    },
  )
  await gateway.start()
  base = gateway.statusAddress ?? ''
  const sink = input.context?.sink
  if (!sink) throw new Error('no sink')
  const recent = formatInZone(Math.floor(nowMicros() / 1e6 - 600) * 1e6, 'Asia/Kolkata')
  // rejected_by_cloud: an employee the cloud does not know.
  await sink.accept(
    'gate-1',
    'mqtt',
    Buffer.from(JSON.stringify({ employeeCode: 'E404', punchType: 'IN', punchedAt: recent })),
  )
  await until(() => gateway.deadLetters.count() === 1)
  // device_clock_invalid: a canteen reader whose clock went back to 2019.
  await sink.accept(
    'canteen',
    'mqtt',
    Buffer.from(JSON.stringify({ employeeCode: 'E001', status: 1, punchedAt: '2019-03-01 13:00:00' })),
  )
  // malformed_frame.
  await sink.accept('gate-1', 'mqtt', Buffer.from(BAD_FRAME))
  parked = ((await (await fetch(`${base}/dead-letters`)).json()) as { data: DeadLetter[] }).data
})

afterAll(async () => {
  await gateway.stop()
  await cloud.stop()
  await rm(dir, { recursive: true, force: true })
})

describe('through the running agent (--url)', () => {
  it('has the three dead letters to work on', () => {
    expect(parked.map((d) => [d.deviceId, d.reason])).toEqual([
      ['gate-1', 'rejected_by_cloud'],
      ['canteen', 'device_clock_invalid'],
      ['gate-1', 'malformed_frame'],
    ])
  })

  it('lists them, one line each: when, device, reason, what, and why', async () => {
    const result = await cli('dead-letters', 'list', '--url', base)
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const [rejected, clock, malformed, ...rest] = result.stdout.split('\n')
    expect(rest).toEqual([''])
    const punchOf = (d: DeadLetter | undefined) =>
      `${d?.punch?.employeeCode} ${d?.punch?.punchType} ${d?.punch?.punchedAt}`
    expect(rejected).toBe(
      `${parked[0]?.at}  gate-1         rejected_by_cloud    ${punchOf(parked[0])}  No employee E404, add them in the directory.`,
    )
    expect(clock).toBe(
      `${parked[1]?.at}  canteen        device_clock_invalid ${punchOf(parked[1])}  ${parked[1]?.detail}`,
    )
    expect(clock).toContain('E001 OUT 2019-03-01T13:00:00+05:30')
    expect(malformed).toBe(
      `${parked[2]?.at}  gate-1         malformed_frame      raw ${JSON.stringify(BAD_FRAME)}  not JSON`,
    )
  })

  it('lists them as JSON with --json, filtered by --reason and --device', async () => {
    const all = await cli('dead-letters', 'list', '--url', base, '--json')
    expect(JSON.parse(all.stdout)).toEqual(parked)
    const byReason = await cli(
      'dead-letters',
      'list',
      '--url',
      base,
      '--json',
      '--reason',
      'device_clock_invalid',
    )
    expect(JSON.parse(byReason.stdout)).toEqual([parked[1]])
    const byDevice = await cli('dead-letters', 'list', '--url', base, '--json', '--device', 'gate-1')
    expect(JSON.parse(byDevice.stdout)).toEqual([parked[0], parked[2]])
    const none = await cli('dead-letters', 'list', '--url', base, '--device', 'no-such-device')
    expect(none).toEqual({ code: 0, stdout: 'no dead letters\n', stderr: '' })
  })

  it('exports them as JSON by default', async () => {
    const result = await cli('dead-letters', 'export', '--url', base)
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual(parked)
  })

  it('exports them as CSV: a header, then a row each that a CSV reader gives back exactly', async () => {
    const result = await cli('dead-letters', 'export', '--url', base, '--format', 'csv')
    expect(result.code).toBe(0)
    expect(result.stdout.split('\n')[0]).toBe(CSV_HEADER)
    const rows = parseCsv(result.stdout, { columns: true }) as Record<string, string>[]
    expect(rows).toEqual(
      parked.map((d) => ({
        id: d.id,
        at: d.at,
        deviceId: d.deviceId,
        reason: d.reason,
        detail: d.detail,
        employeeCode: d.punch?.employeeCode ?? '',
        punchType: d.punch?.punchType ?? '',
        punchedAt: d.punch?.punchedAt ?? '',
        punchId: d.punch?.id ?? '',
        raw: d.raw ?? '',
      })),
    )
    // RFC 4180 §2: a field with a comma, quote or line break is quoted, its quotes doubled.
    expect(result.stdout).toContain(',malformed_frame,not JSON,,,,,"not json, ""quoted""\rnext"\n')
    expect(result.stdout).toContain('"No employee E404, add them in the directory."')
  })

  it('refuses an export format it does not have, with exit status 2', async () => {
    const result = await cli('dead-letters', 'export', '--url', base, '--format', 'xml')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--format must be json or csv')
    expect(result.stdout).toBe('')
  })

  it('replays the dead letters of one reason into the spool, and they reach the cloud', async () => {
    cloud.unknown.delete('E404')
    // A change: the agent takes it only with the control token it keeps in its spool directory.
    const refused = await cli('dead-letters', 'replay', '--url', base, '--reason', 'rejected_by_cloud')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('the agent takes changes only with its control token')
    const tokenFile = join(spoolDir, 'control-token')
    const result = await cli(
      'dead-letters',
      'replay',
      '--url',
      base,
      '--token-file',
      tokenFile,
      '--reason',
      'rejected_by_cloud',
    )
    expect(result).toEqual({
      code: 0,
      stdout: 'replayed 1 punch(es) into the spool; 2 dead letter(s) kept\n',
      stderr: '',
    })
    await until(() => cloud.accepted.includes('E404'))
    const left = JSON.parse(
      (await cli('dead-letters', 'list', '--url', base, '--json')).stdout,
    ) as DeadLetter[]
    expect(left.map((d) => d.reason)).toEqual(['device_clock_invalid', 'malformed_frame'])
  })
})

describe('from the spool directory of a stopped agent (--spool)', () => {
  beforeAll(async () => {
    await until(() => gateway.spool.stats().items === 0)
    await gateway.stop()
  })

  it('says no agent answers, and how to read the directory instead, without --spool', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`
    const list = await cli('dead-letters', 'list', '--url', url)
    expect(list.code).toBe(2)
    expect(list.stderr).toContain(`no agent answers at ${url}: give --spool DIR`)
    const replay = await cli('dead-letters', 'replay', '--url', url)
    expect(replay.code).toBe(2)
    expect(replay.stderr).toContain('no agent is running: give --spool DIR')
  })

  it('lists and exports what the agent listed', async () => {
    const left = parked.slice(1)
    const list = await cli('dead-letters', 'list', '--spool', spoolDir, '--json')
    expect(list.code).toBe(0)
    // Replayed entries were rewritten into a new chunk: same entries, same ids.
    expect(JSON.parse(list.stdout)).toEqual(left)
    const csv = await cli('dead-letters', 'export', '--spool', spoolDir, '--format', 'csv')
    const rows = parseCsv(csv.stdout, { columns: true }) as Record<string, string>[]
    expect(rows.map((r) => [r.id, r.reason, r.raw])).toEqual(left.map((d) => [d.id, d.reason, d.raw ?? '']))
  })

  it('replays into the spool directly, where the agent finds the punch when it starts', async () => {
    const result = await cli('dead-letters', 'replay', '--spool', spoolDir, '--device', 'canteen', '--json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ replayed: 1, kept: 1 })
    const spool = new Spool({
      dir: spoolDir,
      maxBytes: 1 << 30,
      chunkPunches: 500,
      log,
      events: new EventBus(log),
    })
    await spool.start()
    const waiting: SpooledPunch[] = []
    for (const ref of spool.pending()) waiting.push(...(await spool.read(ref)))
    await spool.stop()
    expect(waiting).toEqual([parked[1]?.punch])
    const list = await cli('dead-letters', 'list', '--spool', spoolDir)
    expect(list.stdout).toMatch(/ malformed_frame {6}raw /)
    expect(list.stdout.trim().split('\n')).toHaveLength(1)
  })

  it('says there are none in an empty spool directory', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'hajri-dead-empty-'))
    try {
      expect(await cli('dead-letters', 'list', '--spool', empty)).toEqual({
        code: 0,
        stdout: 'no dead letters\n',
        stderr: '',
      })
      expect((await cli('dead-letters', 'export', '--spool', empty, '--format', 'csv')).stdout).toBe(
        `${CSV_HEADER}\n`,
      )
    } finally {
      await rm(empty, { recursive: true, force: true })
    }
  })
})

describe('a long list of dead letters, page after page', () => {
  let pileDir: string
  let dead: DeadLetters
  let all: DeadLetter[]
  let server: StatusServer
  let url: string

  beforeAll(async () => {
    pileDir = await mkdtemp(join(tmpdir(), 'hajri-dead-pile-'))
    dead = new DeadLetters({ dir: join(pileDir, 'dead-letters'), log })
    await dead.open()
    // More than two pages of the largest size, in several chunk files.
    for (let batch = 0; batch < 3; batch++)
      await dead.add(
        Array.from({ length: 150 }, (_, i) => ({
          deviceId: i % 2 ? 'gate-1' : 'canteen',
          reason: 'malformed_frame' as const,
          detail: `frame ${batch * 150 + i}, "quoted"`,
          raw: `line\n${i}`,
        })),
      )
    all = []
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await dead.list({ limit: 200, cursor })
      all.push(...page.data)
      cursor = page.nextCursor ?? undefined
    }
    expect(all).toHaveLength(450)
    // The running agent's listener, serving the same directory.
    server = new StatusServer({
      listen: '127.0.0.1:0',
      tokenFile: join(pileDir, 'control-token'),
      log,
      status: () => {
        throw new Error('not asked')
      },
      metrics: new Registry(),
      listDeadLetters: ({ limit, cursor, deviceId }) =>
        dead.list({ limit, cursor, select: (e) => deviceId === undefined || e.deviceId === deviceId }),
      replayDeadLetters: async () => ({ replayed: 0, kept: 0 }),
      backfill: async () => {
        throw new Error('not asked')
      },
      setTime: async () => {
        throw new Error('not asked')
      },
      clearLog: async () => {
        throw new Error('not asked')
      },
    })
    await server.start()
    url = server.address ?? ''
  })

  afterAll(async () => {
    await server.stop()
    await rm(pileDir, { recursive: true, force: true })
  })

  it('prints every entry once, in order, exactly as one JSON document, from the directory and the agent', async () => {
    const expected = `${JSON.stringify(all, null, 2)}\n`
    expect((await cli('dead-letters', 'list', '--spool', pileDir, '--json')).stdout).toBe(expected)
    expect((await cli('dead-letters', 'list', '--url', url, '--json')).stdout).toBe(expected)
    expect((await cli('dead-letters', 'export', '--url', url)).stdout).toBe(expected)
  })

  it('reads the one-array answer of an agent started before the upgrade to pages', async () => {
    const older = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(all.slice(0, 3))),
    )
    older.listen(0, '127.0.0.1')
    await once(older, 'listening')
    try {
      const olderUrl = `http://127.0.0.1:${(older.address() as { port: number }).port}`
      const listed = await cli('dead-letters', 'list', '--url', olderUrl, '--json', '--device', 'canteen')
      expect(JSON.parse(listed.stdout)).toEqual(all.slice(0, 3).filter((e) => e.deviceId === 'canteen'))
    } finally {
      older.close()
    }
  })

  it('filters page by page, and writes text and CSV a page at a time', async () => {
    const canteen = all.filter((e) => e.deviceId === 'canteen')
    const filtered = await cli('dead-letters', 'list', '--url', url, '--json', '--device', 'canteen')
    expect(JSON.parse(filtered.stdout)).toEqual(canteen)
    const text = await cli('dead-letters', 'list', '--spool', pileDir)
    expect(text.stdout.trimEnd().split('\n')).toHaveLength(450)
    const csv = await cli('dead-letters', 'export', '--url', url, '--format', 'csv')
    const rows = parseCsv(csv.stdout, { columns: true }) as Record<string, string>[]
    expect(rows.map((r) => [r.id, r.detail, r.raw])).toEqual(all.map((e) => [e.id, e.detail, e.raw]))
  })
})
