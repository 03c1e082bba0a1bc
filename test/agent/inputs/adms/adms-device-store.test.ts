import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AdmsDeviceStore } from '../../../../agent/inputs/adms/adms-device-store.js'

const log = pino({ level: 'silent' })
let dir: string
let clock: number
const open = async () => {
  const store = new AdmsDeviceStore(join(dir, 'devices', 'adms.json'), log, () => clock)
  await store.open()
  return store
}
const SN = 'CJDE193560303'

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-adms-store-'))
  clock = Date.parse('2026-11-26T06:00:00Z')
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the ADMS device state', () => {
  it("keeps each terminal's cursor and figures across restarts", async () => {
    const store = await open()
    expect(store.attlogStamp(SN)).toBeUndefined()
    store.setAttlogStamp(SN, '603923921')
    store.mergeInfo(SN, { users: 12, attendanceCapacity: 100_000 })
    store.mergeInfo(SN, { users: 13, firmware: 'Ver 8.0.4.2' })
    await store.close()
    const again = await open()
    expect(again.attlogStamp(SN)).toBe('603923921')
    expect(again.info(SN)).toEqual({ users: 13, attendanceCapacity: 100_000, firmware: 'Ver 8.0.4.2' })
    await again.close()
  })

  it('writes a queued command before it says it is queued', async () => {
    const store = await open()
    const command = await store.queue(SN, {
      kind: 'backfill',
      from: '2026-11-01 00:00:00',
      to: '2026-11-02 00:00:00',
    })
    // Not closed: what is on disk now is what a crash would leave.
    const onDisk = JSON.parse(await readFile(join(dir, 'devices', 'adms.json'), 'utf8'))
    expect(onDisk.devices[SN].commands).toEqual([
      expect.objectContaining({ id: command.id, state: 'queued' }),
    ])
    await store.close()
  })

  it('hands commands over once, records their results, and hands again what a restarted terminal never answered', async () => {
    const store = await open()
    const info = await store.queue(SN, { kind: 'info' })
    const backfill = await store.queue(SN, {
      kind: 'backfill',
      from: '2026-11-01 00:00:00',
      to: '2026-11-02 00:00:00',
    })
    expect(store.takeQueued(SN, 8).map((c) => c.id)).toEqual([info.id, backfill.id])
    expect(store.takeQueued(SN, 8)).toEqual([])
    expect(store.complete(SN, info.id, 0)).toMatchObject({ state: 'done', returnCode: 0 })
    expect(store.complete(SN, 'nope', 0)).toBeUndefined()
    // The terminal rebooted before it reported on the backfill.
    store.requeueUnanswered(SN)
    expect(store.takeQueued(SN, 8).map((c) => c.id)).toEqual([backfill.id])
    store.requeueUnanswered(SN)
    store.takeQueued(SN, 8)
    store.requeueUnanswered(SN)
    expect(store.commands(SN).find((c) => c.id === backfill.id)).toMatchObject({
      state: 'failed',
      attempts: 3,
      reason: 'no answer after 3 attempts',
    })
    await store.close()
  })

  it('records a refusal as failed, with the code', async () => {
    const store = await open()
    const command = await store.queue(SN, { kind: 'info' })
    store.takeQueued(SN, 1)
    expect(store.complete(SN, command.id, -1002)).toMatchObject({
      state: 'failed',
      returnCode: -1002,
      reason: 'the terminal answered -1002',
    })
    await store.close()
  })

  it('gives ids that stay unique even when the file is lost', async () => {
    const store = await open()
    const first = await store.queue(SN, { kind: 'info' })
    await store.close()
    await rm(join(dir, 'devices', 'adms.json'))
    clock += 1000
    const fresh = await open()
    const second = await fresh.queue(SN, { kind: 'info' })
    expect(Number(second.id)).toBeGreaterThan(Number(first.id))
    await fresh.close()
  })

  it('keeps only the last finished commands of a terminal', async () => {
    const store = await open()
    for (let i = 0; i < 30; i++) {
      const c = await store.queue(SN, { kind: 'info' })
      store.takeQueued(SN, 1)
      store.complete(SN, c.id, 0)
    }
    expect(store.commands(SN)).toHaveLength(20)
    await store.close()
  })

  it('knows whether a command of a kind is out or was done lately', async () => {
    const store = await open()
    expect(store.hasRecent(SN, 'info', 3600_000)).toBe(false)
    const c = await store.queue(SN, { kind: 'info' })
    expect(store.hasRecent(SN, 'info', 3600_000)).toBe(true)
    store.takeQueued(SN, 1)
    store.complete(SN, c.id, 0)
    clock += 3600_001
    expect(store.hasRecent(SN, 'info', 3600_000)).toBe(false)
    await store.close()
  })

  it('starts afresh from an unreadable file, keeping it aside', async () => {
    const path = join(dir, 'devices', 'adms.json')
    const store = await open()
    store.setAttlogStamp(SN, '1')
    await store.close()
    await writeFile(path, '{"kind":"hajri-adms-dev')
    const again = await open()
    expect(again.attlogStamp(SN)).toBeUndefined()
    await again.close()
    const { readdir } = await import('node:fs/promises')
    expect((await readdir(join(dir, 'devices'))).some((f) => f.startsWith('adms.json.unreadable-'))).toBe(
      true,
    )
  })
})
