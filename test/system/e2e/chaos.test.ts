/**
 * The chaos test, bounded in time, runs a device, the agent, the cloud and a webhook receiver,
 * and injects: SIGKILL of the agent and of the cloud; a cloud outage of minutes; a network cut
 * and a slow link (through a TCP proxy the test controls); a spool that fills up; a corrupted
 * spool chunk; PostgreSQL restarted under load (that last one: chaos-postgres.test.ts).
 *
 * Real processes (chaos-rig.ts): an MQTT device publishing QoS 1 punches at a steady pace and a
 * serial device writing ATTLOG lines on a socat pty → the hajri-agent child (spool.maxBytes 1 MiB)
 * → a FaultProxy → the hajri-cloud child on SQLite → a webhook receiver subscribed to
 * attendance.punch.created. One fault after another, each followed by a wait until punches reach
 * the cloud again:
 *   1. the agent killed with SIGKILL, HAJRI_CHAOS_AGENT_KILLS times (default 4);
 *   2. the cloud killed with SIGKILL, HAJRI_CHAOS_CLOUD_KILLS times (default 3), the first and
 *      every other one the moment a webhook reaches the receiver (an attempt in flight);
 *   3. a network cut: every connection dropped, new ones refused (HAJRI_CHAOS_CUT_SECONDS, 15);
 *   4. a slow link: 200–500 ms latency, 4 KB/s each way (HAJRI_CHAOS_SLOW_SECONDS, 20);
 *   5. a cloud outage, the cloud process stopped (HAJRI_CHAOS_OUTAGE_SECONDS, 120), during which
 *      a second device floods the agent until its spool is full and it refuses punches (no PUBACK:
 *      the devices keep them and send them again), then the agent is killed, the spool chunk with
 *      the most punches damaged (frame broken, garbage appended, every record intact) and the
 *      agent started again; the cloud comes back and everything drains, and when the agent meets
 *      the damaged chunk it must quarantine the file, raise its alarm, salvage every punch in it
 *      and carry on.
 * Judged at the end (chaos-judge.ts): every acknowledged punch in the punch log (read through the
 * public API) exactly once; one webhook per stored punch received, verified with standardwebhooks
 * (as of when it arrived, as a receiver does), repeats counted (same webhook-id, same body) but
 * never a loss.
 *
 * The seed is printed with the counts; HAJRI_E2E_SEED=<n> replays its choices (the timing around
 * them is the machine's). HAJRI_E2E_KEEP=1 keeps the directory with the logs and the spool. Without
 * socat the serial device is left out (failed instead under HAJRI_TEST_REQUIRE_ALL=1).
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it, onTestFailed } from 'vitest'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { printTable, seededRandom, sleep, waitFor } from '../../support/e2e-kit.js'
import { socatAvailability } from '../../support/services.js'
import { chaosSetting, type DamagedChunk, damageFullestChunk, FaultLog } from './chaos-faults.js'
import { chaosRows, expectNothingLost, judgeChaos } from './chaos-judge.js'
import { ChaosRig, PUNCH_CREATED } from './chaos-rig.js'

const socat = await socatAvailability()

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)
const AGENT_KILLS = chaosSetting('HAJRI_CHAOS_AGENT_KILLS', 4)
const CLOUD_KILLS = chaosSetting('HAJRI_CHAOS_CLOUD_KILLS', 3)
const CUT_SECONDS = chaosSetting('HAJRI_CHAOS_CUT_SECONDS', 15, 1)
const SLOW_SECONDS = chaosSetting('HAJRI_CHAOS_SLOW_SECONDS', 20, 1)
const OUTAGE_SECONDS = chaosSetting('HAJRI_CHAOS_OUTAGE_SECONDS', 120, 10)
const WARM_UP_MS = 5_000
const SLOW_LINK = { latencyMs: [200, 500] as [number, number], bytesPerSecond: 4096 }
const SALVAGE_MESSAGE =
  'corrupt chunk quarantined, its intact items salvaged into the spool; the rest carries on'

describe(`chaos: faults one after another under steady punch load [SQLite]${socat.skipReason ? ' (no serial device: socat missing)' : ''}`, () => {
  const random = seededRandom(SEED)
  const rig = new ChaosRig({ database: 'sqlite', serial: socat.skipReason === undefined, random })
  afterAll(() => rig.close())

  it('loses no acknowledged punch and no webhook, and stores no punch twice', {
    timeout: (900 + OUTAGE_SECONDS + CUT_SECONDS + SLOW_SECONDS + 30 * (AGENT_KILLS + CLOUD_KILLS)) * 1000,
  }, async () => {
    const startedAt = Date.now()
    const faults = new FaultLog()
    let phase = 'setting up'
    let phaseStartedAt = startedAt
    const phaseSeconds: string[] = []
    const enter = (next: string) => {
      phaseSeconds.push(`${phase} ${Math.round((Date.now() - phaseStartedAt) / 1000)}`)
      phase = next
      phaseStartedAt = Date.now()
    }
    // How far it got, in the CI log, when it fails on its way.
    onTestFailed(async () => {
      printTable(`chaos test, SQLite: failed during ${phase}`, {
        seed: SEED,
        ...faults.rows(),
        'punches sent': rig.sentCount(),
        'punches acknowledged': rig.acknowledged().length,
        'punches stored': await rig.storedCount().catch(() => 'n/a'),
        'webhooks received': rig.receiver.received.length,
        'agent dead letters': (await rig.status())?.deadLetters.count ?? 'n/a',
        'agent spool (status / chunk files)': `${(await rig.status())?.spool.punches ?? 'n/a'} / ${
          (await readdir(rig.spoolDir).catch(() => [])).filter((f) => f.startsWith('chunk-')).length
        }`,
        'seconds per phase': phaseSeconds.join(', '),
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
    })
    await rig.setUp()
    const agent = rig.agent as NonNullable<typeof rig.agent>
    const cloud = rig.cloud as NonNullable<typeof rig.cloud>
    const proxy = rig.proxy as NonNullable<typeof rig.proxy>
    const device = rig.device as NonNullable<typeof rig.device>
    const burst = rig.burst as NonNullable<typeof rig.burst>
    await sleep(WARM_UP_MS)
    await rig.storedGrows('the start')

    enter('agent SIGKILLs')
    // 1. The agent killed at random moments while punches stream in and out.
    for (let n = 0; n < AGENT_KILLS; n++) {
      await sleep(1000 + random() * 3000)
      await rig.restartAgent()
      faults.add('agent SIGKILL')
      await rig.storedGrows(`agent SIGKILL ${n + 1}`)
    }

    enter('cloud SIGKILLs')
    // 2. The cloud killed, every other time the moment a webhook reaches the receiver (that
    //    attempt in flight, never answered), else at a random moment (mid-request, mid-dispatch).
    let killsWithWebhookInFlight = 0
    for (let n = 0; n < CLOUD_KILLS; n++) {
      await sleep(1000 + random() * 3000)
      if (n % 2 === 0) {
        await rig.killCloudOnNextWebhook()
        killsWithWebhookInFlight++
      } else await cloud.kill()
      faults.add('cloud SIGKILL')
      await cloud.start(60_000)
      await rig.storedGrows(`cloud SIGKILL ${n + 1}`)
    }

    enter('the network cut')
    // 3. The network cut: the agent notices, keeps spooling, and sends it all once it is back.
    const cutAt = Date.now()
    await proxy.cut()
    faults.add('network cut')
    const cutSeen = await waitFor(async () => {
      const s = await rig.status()
      return s?.alarms.find((a) => a.startsWith('cloud unreachable')) &&
        isAfter(s.forwarding.lastError?.at, cutAt)
        ? s
        : undefined
    }, 'the agent to raise "cloud unreachable" during the cut')
    await sleep(Math.max(0, cutAt + CUT_SECONDS * 1000 - Date.now()))
    const storedAfterCut = await rig.storedCount()
    await proxy.restore()
    await rig.storedGrows('the network cut', storedAfterCut)

    enter('the slow link')
    // 4. The slow link: requests take seconds, some time out after the cloud stored them.
    const storedAtSlow = await rig.storedCount()
    await proxy.slow(SLOW_LINK)
    faults.add('slow link')
    await sleep(SLOW_SECONDS * 1000)
    // Forwarding went on at the link's pace (waited for, not timed).
    const storedWhileSlow = (await rig.storedGrows('the link became slow', storedAtSlow)) - storedAtSlow
    await proxy.restore()
    await rig.storedGrows('the slow link')

    enter('the cloud outage')
    // 5. The cloud outage, with a spool that fills up and a corrupted chunk inside it.
    const outageAt = Date.now()
    const cloudStopExit = await cloud.stop()
    faults.add('cloud outage (process stopped)')
    await waitFor(
      async () => isAfter((await rig.status())?.forwarding.lastError?.at, outageAt),
      'the agent to see the outage',
    )
    await sleep(Math.min(OUTAGE_SECONDS * 400, 30_000))

    // The spool fills: a second device floods the agent until it refuses punches.
    await rig.serial?.hold()
    burst.startStreaming()
    const full = await waitFor(
      async () => {
        const s = await rig.status()
        return s?.spool.full ? s : undefined
      },
      'the spool to fill up',
      { timeoutMs: 120_000 },
    )
    faults.add('spool full')
    // Refused: the devices hold the punches the agent did not acknowledge, and send them again
    // each time they reconnect (the agent closes the connection on a refusal). The punch that found
    // the spool full may have been the steady device's, so the flood goes on until it holds some too.
    await waitFor(() => burst.outstanding > 0, 'the flooding device to hold refused punches')
    burst.stopStreaming()
    const ackedAtFull = acked(device) + acked(burst)
    const refusedHeld = burst.outstanding + device.outstanding

    // A corrupted chunk: the agent stopped, its fullest chunk damaged, the agent started again.
    let damaged: DamagedChunk | undefined
    await rig.restartAgent(async () => {
      damaged = await damageFullestChunk(rig.spoolDir)
    })
    faults.add('agent SIGKILL')
    faults.add('corrupted spool chunk')

    await sleep(Math.max(0, outageAt + OUTAGE_SECONDS * 1000 - Date.now()))
    const ackedWhileFull = acked(device) + acked(burst) - ackedAtFull
    const storedBeforeReturn = await rig.storedCount()
    await cloud.start(60_000)
    // The agent's backoff after minutes of failures may wait up to its cap (5 min) to try again.
    await rig.storedGrows('the outage', storedBeforeReturn, 420_000)
    await waitFor(async () => (await rig.status())?.spool.full === false, 'the spool to have room again', {
      timeoutMs: 420_000,
    })
    await rig.serial?.release()
    // The damaged chunk is met when the forwarder reaches it (during the outage if it was among the
    // first, else in the drain): quarantined, its alarm raised, its punches salvaged behind.
    const quarantinedSeen = await waitFor(
      async () => {
        const s = await rig.status()
        return s && s.spool.quarantinedChunks > 0 ? s : undefined
      },
      'the agent to quarantine the damaged chunk',
      { timeoutMs: 420_000 },
    )
    const salvage = await waitFor(
      () => agent.errors.find((line) => line.msg === SALVAGE_MESSAGE && line.run === agent.runs),
      'the log line of the salvage',
    )

    enter('the end (settling)')
    // The end: every device acknowledged, the spool drained, every webhook sent.
    const drained: AgentStatus = await rig.settle(300_000)
    enter('the verdict')
    const stored = await rig.readPunchLog()
    const agentExit = await agent.stop()
    const cloudExit = await cloud.stop()
    const quarantine = await readdir(join(rig.spoolDir, 'quarantine')).catch(() => [])
    const agentRetriesRow = async () => {
      const { count, longestMs } = await rig.agentRetries()
      return `${count} / ${longestMs}`
    }
    const verdict = judgeChaos({
      sentCount: rig.sentCount(),
      acknowledged: rig.acknowledged(),
      stored,
      received: rig.receiver.received,
      secret: rig.endpoint.secret,
      eventType: PUNCH_CREATED,
    })
    const storedIds = new Set(stored.map((p) => p.externalId))
    const damagedIds = damaged?.ids ?? []
    printTable('chaos test, SQLite', {
      seed: SEED,
      ...faults.rows(),
      'faults injected': faults.total,
      ...chaosRows(verdict),
      'cloud SIGKILLs with a webhook in flight': killsWithWebhookInFlight,
      'MQTT punches published again by the device': device.resends + burst.resends,
      'serial lines written': rig.serial?.device.sent.length ?? 'n/a (no socat)',
      'spool full at (bytes / maxBytes)': `${full.spool.bytes} / ${full.spool.maxBytes}`,
      'punches held by the devices while refused': refusedHeld,
      'punches PUBACKed while the spool was full': ackedWhileFull,
      'damaged chunk: punches in it': damagedIds.length,
      'damaged chunk: salvaged / unrecoverable': `${salvage.salvaged} / ${salvage.unrecoverable}`,
      'damaged chunk: its punches stored': damagedIds.filter((id) => storedIds.has(id)).length,
      'punches stored while the link was slow': storedWhileSlow,
      'proxy: connections / dropped / bytes (slow)': `${proxy.counts.connections} / ${proxy.counts.dropped} / ${proxy.counts.bytes} (${proxy.counts.slowBytes})`,
      'agent retries to the cloud / longest backoff (ms)': await agentRetriesRow(),
      'agent / cloud processes': `${agent.runs} / ${cloud.runs}`,
      'agent / cloud error lines': `${agent.errors.length} / ${cloud.errors.length}`,
      'agent dead letters': drained.deadLetters.count,
      'seconds per phase': phaseSeconds.join(', '),
      seconds: Math.round((Date.now() - startedAt) / 1000),
    })
    if (cloud.errors.length > 0) console.warn('cloud error lines (first 5):', cloud.errors.slice(0, 5))
    const problems = Object.entries(verdict.problems).filter(([, found]) => found.length > 0)
    if (problems.length > 0) console.warn('chaos findings:', Object.fromEntries(problems))

    expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
    expect(cloud.unexpectedExits, 'the cloud exited on its own (a crash)').toEqual([])
    expect({ agentExit, cloudExit, cloudStopExit }, 'exit codes of SIGTERM stops').toEqual({
      agentExit: 0,
      cloudExit: 0,
      cloudStopExit: 0,
    })
    expectNothingLost(verdict)
    // The faults happened as meant.
    expect(Object.fromEntries(faults.counts)).toEqual({
      'agent SIGKILL': AGENT_KILLS + 1,
      ...(CLOUD_KILLS > 0 ? { 'cloud SIGKILL': CLOUD_KILLS } : {}),
      'network cut': 1,
      'slow link': 1,
      'cloud outage (process stopped)': 1,
      'spool full': 1,
      'corrupted spool chunk': 1,
    })
    expect(cutSeen.alarms.some((a) => a.startsWith('cloud unreachable'))).toBe(true)
    expect(full.alarms.some((a) => a.startsWith('spool full'))).toBe(true)
    expect(refusedHeld).toBeGreaterThan(0)
    // Each attempt in flight at a kill was sent again by the next process (same webhook-id: judged).
    expect(verdict.webhooks.duplicated).toBeGreaterThanOrEqual(killsWithWebhookInFlight)
    expect(proxy.counts.slowBytes).toBeGreaterThan(0)
    // The damaged chunk: quarantined and kept, its alarm raised, every punch in it salvaged and stored.
    expect(quarantinedSeen.alarms.some((a) => a.includes('corrupt spool chunk(s) quarantined'))).toBe(true)
    expect(quarantine).toHaveLength(1)
    expect(damagedIds.length).toBeGreaterThan(0)
    expect({ salvaged: salvage.salvaged, unrecoverable: salvage.unrecoverable, file: salvage.file }).toEqual({
      salvaged: damagedIds.length,
      unrecoverable: 0,
      file: damaged?.file,
    })
    expect(damagedIds.filter((id) => !storedIds.has(id))).toEqual([])
    expect(drained.deadLetters.count).toBe(0)
    expect(drained.spool.quarantinedChunks).toBe(1)
  })
})

function acked(device: { punches: readonly { acked: boolean }[] }): number {
  return device.punches.filter((p) => p.acked).length
}

/** Whether an ISO time is at or after `ms`. */
function isAfter(iso: string | undefined | null, ms: number): boolean {
  return iso !== undefined && iso !== null && Date.parse(iso) >= ms
}
