import { mkdir, rename } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Logger } from 'pino'
import { DurableJsonFile, syncDirectory } from '../../spool/durable-json-file.js'
import { type AdmsCommandRequest, commandText } from './adms-commands.js'
import type { TerminalInfo } from './terminal-info.js'

/** A command for a terminal and what became of it. */
export interface StoredCommand {
  /** Unique for the agent's life and beyond a lost state file: see nextId(). */
  id: string
  kind: AdmsCommandRequest['kind']
  text: string
  state: 'queued' | 'sent' | 'done' | 'failed'
  queuedAt: string
  sentAt?: string
  doneAt?: string
  /** The terminal's Return code, once it reported. */
  returnCode?: number
  /** Times it was handed to the terminal. */
  attempts: number
  /** Why it failed, in words. */
  reason?: string
}

/** What is kept per terminal across restarts. */
interface StoredTerminal {
  /** The terminal's cursor as it last reported it with an upload (opaque). */
  attlogStamp?: string
  info?: TerminalInfo
  commands: StoredCommand[]
}

interface StoreFile {
  kind: 'hajri-adms-devices'
  version: 1
  nextCommandId: number
  devices: Record<string, StoredTerminal>
}

/** Finished commands kept per terminal, for status. */
const KEPT_FINISHED = 20
/** A command handed over this many times without an answer is given up. */
const MAX_ATTEMPTS = 3
/** Changes of stamps and counts are written at most this often. */
const SAVE_DELAY_MS = 500

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * What the agent keeps about its push terminals between runs, in one small JSON file beside the
 * spool (`devices/adms.json`): each terminal's resume cursor, what it last said about itself, and
 * its commands.
 *
 * The cursor (ATTLOGStamp) goes back to the terminal in every handshake, so a terminal that
 * reboots, or an agent that restarts, does not make the terminal send its whole log again. It is
 * written lazily, after the upload it came with is durable in the spool: if it is lost (a crash
 * within half a second, a deleted file), the terminal sends from an older cursor, and what it sends
 * again is a resend the punch ids make harmless. A queued command is written before the CLI is
 * told it is queued.
 */
export class AdmsDeviceStore {
  private data: StoreFile = { kind: 'hajri-adms-devices', version: 1, nextCommandId: 0, devices: {} }
  private readonly file: DurableJsonFile<StoreFile>
  private saving: Promise<void> | undefined
  private dirty = false
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new DurableJsonFile<StoreFile>(path)
  }

  async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true })
    let read: StoreFile | null = null
    try {
      read = await this.file.read()
    } catch (err) {
      // Unreadable: kept aside for a person, and started afresh. Cursors start from nothing (the
      // terminals send what they hold again, deduplicated) and queued commands are lost: said loudly.
      const aside = `${this.path}.unreadable-${this.now()}`
      await rename(this.path, aside).catch(() => {})
      this.log.error({ err, movedTo: aside }, 'ADMS device state unreadable: starting afresh')
    }
    if (
      read &&
      read.kind === 'hajri-adms-devices' &&
      read.version === 1 &&
      typeof read.devices === 'object'
    ) {
      this.data = read
    }
    this.closed = false
  }

  /** Writes what is pending and stops writing; a failure is logged (what was lost costs resends). */
  async close(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    await this.save().catch((err) => this.log.error({ err }, 'saving ADMS device state failed'))
    this.closed = true
  }

  private terminal(serialNumber: string): StoredTerminal {
    let terminal = this.data.devices[serialNumber]
    if (!terminal) {
      terminal = { commands: [] }
      this.data.devices[serialNumber] = terminal
    }
    return terminal
  }

  attlogStamp(serialNumber: string): string | undefined {
    return this.data.devices[serialNumber]?.attlogStamp
  }

  setAttlogStamp(serialNumber: string, stamp: string): void {
    const terminal = this.terminal(serialNumber)
    if (terminal.attlogStamp === stamp) return
    terminal.attlogStamp = stamp
    this.saveSoon()
  }

  info(serialNumber: string): TerminalInfo {
    return this.data.devices[serialNumber]?.info ?? {}
  }

  mergeInfo(serialNumber: string, info: TerminalInfo): void {
    if (Object.keys(info).length === 0) return
    const terminal = this.terminal(serialNumber)
    const merged = { ...terminal.info, ...info }
    if (JSON.stringify(merged) === JSON.stringify(terminal.info)) return
    terminal.info = merged
    this.saveSoon()
  }

  commands(serialNumber: string): readonly StoredCommand[] {
    return this.data.devices[serialNumber]?.commands ?? []
  }

  /** Queues a command; resolves once that is on disk. */
  async queue(serialNumber: string, request: AdmsCommandRequest): Promise<StoredCommand> {
    const command: StoredCommand = {
      id: this.nextId(),
      kind: request.kind,
      text: commandText(request),
      state: 'queued',
      queuedAt: iso(this.now()),
      attempts: 0,
    }
    this.terminal(serialNumber).commands.push(command)
    this.prune(serialNumber)
    this.dirty = true
    await this.save()
    return command
  }

  /** Whether a command of this kind is waiting or out, or was done within `withinMs`. */
  hasRecent(serialNumber: string, kind: StoredCommand['kind'], withinMs: number): boolean {
    const since = this.now() - withinMs
    return this.commands(serialNumber).some(
      (c) =>
        c.kind === kind &&
        (c.state === 'queued' || c.state === 'sent' || Date.parse(c.doneAt ?? c.queuedAt) >= since),
    )
  }

  /** Hands up to `max` queued commands over: they are sent now. */
  takeQueued(serialNumber: string, max: number): StoredCommand[] {
    const taken = this.commands(serialNumber)
      .filter((c) => c.state === 'queued')
      .slice(0, max)
    for (const command of taken) {
      command.state = 'sent'
      command.sentAt = iso(this.now())
      command.attempts++
    }
    if (taken.length > 0) this.saveSoon()
    return taken
  }

  /** Records a terminal's report; undefined when no command of this terminal has that id. */
  complete(serialNumber: string, id: string, returnCode: number): StoredCommand | undefined {
    const command = this.commands(serialNumber).find((c) => c.id === id)
    if (!command) return undefined
    command.state = returnCode === 0 ? 'done' : 'failed'
    command.returnCode = returnCode
    command.doneAt = iso(this.now())
    if (returnCode !== 0) command.reason = `the terminal answered ${returnCode}`
    this.prune(serialNumber)
    this.saveSoon()
    return command
  }

  /**
   * A terminal that handshakes again has restarted or reconnected, and may never report on what it
   * was handed: those commands (all of them reads, so harmless twice) are queued again, and given
   * up after MAX_ATTEMPTS.
   */
  requeueUnanswered(serialNumber: string): void {
    let changed = false
    for (const command of this.commands(serialNumber)) {
      if (command.state !== 'sent') continue
      changed = true
      if (command.attempts >= MAX_ATTEMPTS) {
        command.state = 'failed'
        command.doneAt = iso(this.now())
        command.reason = `no answer after ${command.attempts} attempts`
      } else command.state = 'queued'
    }
    if (changed) this.saveSoon()
  }

  /**
   * Above the counter in the file, and above the clock in seconds: ids stay unique even when the
   * file is lost, so a late report is never matched to a newer command.
   */
  private nextId(): string {
    this.data.nextCommandId = Math.max(this.data.nextCommandId + 1, Math.floor(this.now() / 1000))
    return String(this.data.nextCommandId)
  }

  private prune(serialNumber: string): void {
    const terminal = this.terminal(serialNumber)
    const finished = terminal.commands.filter((c) => c.state === 'done' || c.state === 'failed')
    const drop = new Set(finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED)))
    if (drop.size > 0) terminal.commands = terminal.commands.filter((c) => !drop.has(c))
  }

  private saveSoon(): void {
    this.dirty = true
    if (this.timer || this.closed) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.save().catch((err) => this.log.error({ err }, 'saving ADMS device state failed'))
    }, SAVE_DELAY_MS)
    this.timer.unref()
  }

  /** Writes the state if it changed; one write at a time, and one more if it changed meanwhile. */
  private async save(): Promise<void> {
    // Another caller's failed write is theirs to report; this one tries its own.
    while (this.saving) await this.saving.catch(() => {})
    if (!this.dirty) return
    this.dirty = false
    const write = async () => {
      await this.file.write(this.data)
      await syncDirectory(dirname(this.path))
    }
    this.saving = write().finally(() => {
      this.saving = undefined
    })
    try {
      await this.saving
    } catch (err) {
      this.dirty = true
      throw err
    }
  }
}
