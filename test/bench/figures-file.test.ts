import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  FIGURES_BEGIN,
  FIGURES_END,
  FIGURES_TEMPLATE,
  updateFiguresText,
  writeFiguresFile,
} from './figures-file.js'
import type { BenchResult, MachineInfo } from './report.js'

const machine: MachineInfo = {
  os: 'Linux 6.1.0 x64',
  cpuModel: 'Fake CPU 9000',
  cores: 2,
  node: 'v20.99.0',
  memoryGiB: 7.5,
  loadAverage: [0.5, 0.4, 0.3],
}
const date = new Date('2027-01-02T03:04:05.000Z')

function result(name: string, over: Partial<BenchResult> = {}): BenchResult {
  return {
    name,
    title: name,
    method: 'fake',
    startedAt: date.toISOString(),
    elapsedSeconds: 1,
    figures: [
      {
        name: 'throughput',
        value: { label: 'subject', value: 1234, unit: 'req/s' },
        baseline: { label: 'bare route', value: 4936, unit: 'req/s' },
        ratio: 0.25,
        goal: { of: 'ratio', op: '>=', target: 0.5 },
      },
    ],
    problems: [],
    notes: [],
    details: {},
    ...over,
  }
}

describe('the figures file writer', () => {
  it('puts the date, the machine and each measured ratio in the benchmark part', () => {
    const text = updateFiguresText(undefined, [result('punch-endpoint')], machine, date)
    expect(text.startsWith(FIGURES_TEMPLATE.split(FIGURES_BEGIN)[0] as string)).toBe(true)
    expect(text).toContain('- Date: 2027-01-02T03:04:05.000Z')
    expect(text).toContain(
      '- Machine: Fake CPU 9000, 2 cores, 7.5 GiB; Linux 6.1.0 x64; load average 0.5 0.4 0.3',
    )
    expect(text).toContain('- Node: v20.99.0')
    expect(text).toContain('- Benchmarks run: punch-endpoint')
    expect(text).toContain(
      '| punch-endpoint: throughput | 1,234 req/s (subject) | 4,936 req/s (bare route) | 0.250 | ratio >= 0.5: NOT met |',
    )
    expect(text.indexOf(FIGURES_BEGIN)).toBeLessThan(text.indexOf(FIGURES_END))
  })

  it('replaces only the part between the markers, keeping what was recorded by hand', () => {
    const before = [
      '# Figures',
      '',
      FIGURES_BEGIN,
      'old benchmark figures',
      FIGURES_END,
      '',
      '## Chaos (recorded by hand)',
      '',
      '| punches lost | 0 |',
      '',
    ].join('\n')
    const after = updateFiguresText(before, [result('batch-ingest')], machine, date)
    expect(after).not.toContain('old benchmark figures')
    expect(after).toContain('| batch-ingest: throughput |')
    expect(after.startsWith('# Figures\n\n')).toBe(true)
    expect(after.endsWith('\n\n## Chaos (recorded by hand)\n\n| punches lost | 0 |\n')).toBe(true)
    // Running it again gives the same file: the markers are kept, nothing accumulates.
    expect(updateFiguresText(after, [result('batch-ingest')], machine, date)).toBe(after)
  })

  it('lists the problems of a benchmark that measured something else', () => {
    const text = updateFiguresText(
      undefined,
      [result('agent-drain', { figures: [], problems: ['12 responses were 500'] })],
      machine,
      date,
    )
    expect(text).toContain('- **Problem** (agent-drain): 12 responses were 500')
  })

  it('refuses a file whose markers are broken rather than cut away what follows', () => {
    expect(() => updateFiguresText(`${FIGURES_BEGIN}\nno end`, [result('x')], machine, date)).toThrow(
      /broken marker pair/,
    )
    expect(() => updateFiguresText(`${FIGURES_END}\n${FIGURES_BEGIN}`, [result('x')], machine, date)).toThrow(
      /broken marker pair/,
    )
  })

  describe('on disk', () => {
    let directory: string
    beforeEach(async () => {
      directory = await mkdtemp(join(tmpdir(), 'hajri-figures-'))
    })
    afterEach(async () => {
      await rm(directory, { recursive: true, force: true })
    })

    it('creates the file when it does not exist, and rewrites it in place', async () => {
      const path = join(directory, 'figures.md')
      await writeFiguresFile(path, [result('agent-idle')], machine, date)
      const first = await readFile(path, 'utf8')
      expect(first).toContain('| agent-idle: throughput |')
      await writeFile(path, `${first}\n## Soak\n\nkept\n`)
      await writeFiguresFile(path, [result('agent-ingest')], machine, new Date('2027-02-01T00:00:00Z'))
      const second = await readFile(path, 'utf8')
      expect(second).not.toContain('agent-idle')
      expect(second).toContain('- Date: 2027-02-01T00:00:00.000Z')
      expect(second).toContain('## Soak\n\nkept\n')
    })
  })
})
