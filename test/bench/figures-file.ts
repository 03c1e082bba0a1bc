import { readFile, writeFile } from 'node:fs/promises'
import { type BenchResult, type MachineInfo, summaryMarkdown } from './report.js'

/**
 * `npm run bench -- --figures docs/development/figures.md`: the benchmark part of the one file that
 * holds the figures which go stale (docs/development/benchmarks.md). The part sits between two
 * markers and is replaced whole; the rest of the file (chaos, soak and fuzzing results, recorded by
 * hand) is kept as it is.
 */
export const FIGURES_BEGIN =
  '<!-- figures:benchmarks:begin (written by `npm run bench -- --figures FILE`; edits between the markers are replaced) -->'
export const FIGURES_END = '<!-- figures:benchmarks:end -->'

/** A file with no markers yet starts as this. */
export const FIGURES_TEMPLATE = `# Figures

Every measured figure that goes stale lives here, with the date and the machine of its run; the
other documents link to this file instead of quoting numbers.

${FIGURES_BEGIN}
${FIGURES_END}
`

/** The benchmark part, markers included: the date and machine at its top, then the figures. */
function benchmarkSection(results: readonly BenchResult[], machine: MachineInfo, date: Date): string {
  // The table is the one bench/results/summary.md shows, taken from the same renderer so the two
  // never disagree: from its header row to the first blank line.
  const summary = summaryMarkdown(results, machine, date).split('\n')
  const first = summary.findIndex((line) => line.startsWith('| figure |'))
  const blank = summary.indexOf('', first)
  const table = first < 0 ? [] : summary.slice(first, blank < 0 ? undefined : blank)
  const problems = results.flatMap((r) => r.problems.map((p) => `- **Problem** (${r.name}): ${p}`))
  return [
    FIGURES_BEGIN,
    '## Benchmarks (`npm run bench`)',
    '',
    `- Date: ${date.toISOString()}`,
    `- Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB; ${machine.os}; load average ${machine.loadAverage.join(' ')} at the start`,
    `- Node: ${machine.node}`,
    `- Benchmarks run: ${results.map((r) => r.name).join(', ')}`,
    '- Each ratio is to a baseline measured in the same run on the same machine.',
    '',
    ...table,
    ...(problems.length > 0 ? ['', ...problems] : []),
    FIGURES_END,
  ].join('\n')
}

/**
 * The figures file's new text: `existing` with its benchmark part replaced, or the template with it
 * filled in when there is no file yet. A file with one marker and not the other is refused rather
 * than guessed at, since a guess could cut away the hand-recorded results.
 */
export function updateFiguresText(
  existing: string | undefined,
  results: readonly BenchResult[],
  machine: MachineInfo,
  date: Date,
): string {
  const text = existing ?? FIGURES_TEMPLATE
  const begin = text.indexOf(FIGURES_BEGIN)
  const end = text.indexOf(FIGURES_END)
  if (begin < 0 && end < 0) {
    return `${text.trimEnd()}\n\n${benchmarkSection(results, machine, date)}\n`
  }
  if (begin < 0 || end < begin) {
    throw new Error(`the figures file has a broken marker pair (${FIGURES_BEGIN} ... ${FIGURES_END})`)
  }
  return (
    text.slice(0, begin) + benchmarkSection(results, machine, date) + text.slice(end + FIGURES_END.length)
  )
}

export async function writeFiguresFile(
  path: string,
  results: readonly BenchResult[],
  machine: MachineInfo,
  date: Date,
): Promise<void> {
  let existing: string | undefined
  try {
    existing = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  await writeFile(path, updateFiguresText(existing, results, machine, date))
}
