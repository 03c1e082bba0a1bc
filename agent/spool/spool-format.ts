import type { Dir } from 'node:fs'
import { lstat, mkdir, opendir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { CorruptFileError, DurableJsonFile, syncDirectory } from './durable-json-file.js'

/**
 * The layout of the spool directory this agent reads and writes: chunk files, dead-letters/,
 * quarantine/ and what is in them (docs/decisions/0087-spool-format-version.md). Raised by one,
 * with a migration appended to SPOOL_MIGRATIONS, whenever an agent would misread what an older
 * one wrote, or an older one would misread what it writes.
 */
export const SPOOL_FORMAT = 1

/** Agents from before the marker wrote this format: a spool with files and no marker is in it. */
export const UNMARKED_FORMAT = 1

/** The marker's file name, in the spool directory. */
export const SPOOL_FORMAT_FILE = 'format.json'

/**
 * What format.json holds. These two fields keep their meaning in every format to come, so that
 * any agent, however old, can read why it must not open a newer spool (a later format may add
 * fields; they are ignored here).
 */
export interface SpoolFormatMarker {
  format: number
  /** The version of the agent that put the spool in this format (created or migrated it). */
  writtenBy: string
}

/**
 * One step of the upgrade path: moves a spool from format `from` to `from + 1`. It runs before
 * anything else reads the spool, and the marker is raised only once it has finished, so a step
 * cut short by a crash or power cut runs again from the start at the next start: it must cope
 * with its own half-done work (docs/decisions/0087-spool-format-version.md).
 */
export interface SpoolMigration {
  from: number
  /** What changes, for the log. */
  summary: string
  migrate(dir: string, log: Logger): Promise<void>
}

/**
 * Format 1 to SPOOL_FORMAT, one step per format, in order. Empty while the spool has only ever
 * had format 1; a format change appends its step here, and its test (test/agent/spool/).
 */
export const SPOOL_MIGRATIONS: readonly SpoolMigration[] = []

export type SpoolFormatErrorCode =
  /** Written by a newer agent, in a format this one does not know. */
  | 'spool_format_newer'
  /** format.json is there but cannot be read as a marker. */
  | 'spool_format_unreadable'
  /** An older format that only the agent's start migrates (a read-only command was asked). */
  | 'spool_format_older'

/** The spool cannot be opened as it is; nothing in it was changed. */
export class SpoolFormatError extends Error {
  constructor(
    readonly code: SpoolFormatErrorCode,
    message: string,
    readonly dir: string,
  ) {
    super(message)
    this.name = 'SpoolFormatError'
  }
}

interface FormatOptions {
  /** This agent's version, named in messages and recorded in the marker. */
  version: string
  /** The format this agent reads and writes; SPOOL_FORMAT but in tests of the upgrade path. */
  format?: number
  migrations?: readonly SpoolMigration[]
}

/** What a spool directory is, as found. */
export interface SpoolFormatFound {
  /** The format its files are in; null for a directory that holds nothing yet (a new spool). */
  format: number | null
  /** The marker as read; null when there is none. */
  marker: SpoolFormatMarker | null
}

function isMarker(value: unknown): value is SpoolFormatMarker {
  const m = value as Record<string, unknown>
  return (
    typeof m === 'object' &&
    m !== null &&
    Number.isSafeInteger(m.format) &&
    (m.format as number) >= 1 &&
    typeof m.writtenBy === 'string'
  )
}

function markerFile(dir: string): DurableJsonFile<unknown> {
  return new DurableJsonFile<unknown>(join(dir, SPOOL_FORMAT_FILE))
}

/**
 * Whether the directory holds anything, leftovers of an interrupted write aside (no one was told
 * they were stored); false when it does not exist yet. It stops at the first entry: a spool left
 * by a long outage holds a million files, whose names are never all read into memory at once
 * (see ChunkLog.open).
 */
async function holdsAnything(dir: string): Promise<boolean> {
  let listing: Dir
  try {
    listing = await opendir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
  try {
    for (let entry = await listing.read(); entry; entry = await listing.read())
      if (!entry.name.endsWith('.tmp')) return true
    return false
  } finally {
    await listing.close()
  }
}

async function isPresent(path: string): Promise<boolean> {
  try {
    await lstat(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

/** Reads what the spool directory is, without changing anything in it. */
export async function readSpoolFormat(dir: string): Promise<SpoolFormatFound> {
  let value: unknown
  try {
    value = await markerFile(dir).read()
  } catch (err) {
    if (!(err instanceof CorruptFileError)) throw err
    value = err
  }
  // Null is also what a file holding `null` reads as: that one is there, and not a marker.
  if (value === null && !(await isPresent(join(dir, SPOOL_FORMAT_FILE)))) {
    return { format: (await holdsAnything(dir)) ? UNMARKED_FORMAT : null, marker: null }
  }
  if (!isMarker(value)) {
    const reason = value instanceof CorruptFileError ? 'it is not JSON' : 'it is not a format marker'
    throw new SpoolFormatError(
      'spool_format_unreadable',
      `the spool ${dir} has a ${SPOOL_FORMAT_FILE} that cannot be read (${reason}); nothing in the spool was changed. ` +
        `If only agents of spool format ${UNMARKED_FORMAT} have used this spool, move ${SPOOL_FORMAT_FILE} out of it and start the agent again`,
      dir,
    )
  }
  return { format: value.format, marker: value }
}

/** The steps from `from` to `to`, checked to be a whole path. */
function pathBetween(from: number, to: number, migrations: readonly SpoolMigration[]): SpoolMigration[] {
  const steps: SpoolMigration[] = []
  for (let format = from; format < to; format++) {
    const step = migrations.find((m) => m.from === format)
    // A build whose list misses a step is a bug in that build, caught by spool-format.test.ts.
    if (!step) throw new Error(`no spool migration from format ${format} (SPOOL_MIGRATIONS)`)
    steps.push(step)
  }
  return steps
}

/**
 * Checks, without changing anything, that this agent can read the spool as it is: one in its own
 * format, or with no marker and no files (new), or with files and no marker (written by an agent
 * from before the marker, in UNMARKED_FORMAT). A newer format is refused; so is an older one that
 * needs migrating, which only the agent's start does (openSpoolFormat). For the commands that read
 * a stopped agent's spool (`dead-letters list --spool`).
 */
export async function checkSpoolFormat(dir: string, options: FormatOptions): Promise<SpoolFormatFound> {
  const reads = options.format ?? SPOOL_FORMAT
  const found = await readSpoolFormat(dir)
  if (found.format === null) return found
  refuseNewer(dir, found.format, found.marker, reads, options.version)
  if (found.format < reads) {
    throw new SpoolFormatError(
      'spool_format_older',
      `the spool ${dir} is in spool format ${found.format} (written by ${found.marker ? `hajri-agent ${found.marker.writtenBy}` : 'an agent from before format markers'}); ` +
        `this agent (hajri-agent ${options.version}) moves it to format ${reads} when it starts: ` +
        'start the agent once, then run this again; nothing in the spool was changed',
      dir,
    )
  }
  return found
}

function refuseNewer(
  dir: string,
  format: number,
  marker: SpoolFormatMarker | null,
  reads: number,
  version: string,
): void {
  if (format <= reads) return
  const by = marker?.writtenBy ?? 'unknown'
  throw new SpoolFormatError(
    'spool_format_newer',
    `the spool ${dir} was written by hajri-agent ${by} (spool format ${format}); ` +
      `this agent (hajri-agent ${version}) reads format <= ${reads}: install ${by} or newer; ` +
      'nothing in the spool was changed',
    dir,
  )
}

/**
 * Makes the spool directory one this agent can use, before anything else touches it
 * (docs/decisions/0087-spool-format-version.md): a newer format is refused with nothing changed
 * (SpoolFormatError); an older one is migrated step by step, the marker raised after each; a new
 * spool, or one from an agent before the marker, gets the marker. A marker already in this
 * agent's format is left as it is, naming the agent that put the spool in it. Returns the format
 * the spool was found in.
 */
export async function openSpoolFormat(
  dir: string,
  options: FormatOptions & { log: Logger },
): Promise<SpoolFormatFound> {
  const reads = options.format ?? SPOOL_FORMAT
  const found = await readSpoolFormat(dir)
  if (found.format === null) {
    await mkdir(dir, { recursive: true })
    await writeMarker(dir, { format: reads, writtenBy: options.version })
    return found
  }
  refuseNewer(dir, found.format, found.marker, reads, options.version)
  const steps = pathBetween(found.format, reads, options.migrations ?? SPOOL_MIGRATIONS)
  for (const step of steps) {
    options.log.warn(
      { dir, from: step.from, to: step.from + 1, change: step.summary },
      'migrating the spool to a newer format',
    )
    await step.migrate(dir, options.log)
    await writeMarker(dir, { format: step.from + 1, writtenBy: options.version })
  }
  if (!found.marker && steps.length === 0) {
    options.log.info(
      { dir, format: reads },
      'spool from an agent before format markers: adopted as it is, marker written',
    )
    await writeMarker(dir, { format: reads, writtenBy: options.version })
  }
  return found
}

/** Written whole or not at all (DurableJsonFile), and durable once the directory is synced. */
async function writeMarker(dir: string, marker: SpoolFormatMarker): Promise<void> {
  await markerFile(dir).write(marker)
  await syncDirectory(dir)
}
