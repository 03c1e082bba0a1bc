/**
 * The chaos test's fault "PostgreSQL restarted under load" (the other faults: chaos.test.ts).
 *
 * The chaos rig (chaos-rig.ts) with the cloud on a PostgreSQL cluster of this test's own
 * (private-postgres.ts: initdb and pg_ctl on a free port, in a temporary directory; the machine's
 * shared PostgreSQL, which other tests use at the same time, is never restarted). Under the devices'
 * steady load the cluster is restarted with `pg_ctl restart -m fast` (sessions ended, a clean
 * shutdown), then `-m immediate` (no shutdown: the server comes back by crash recovery), then fast
 * again; after each, punches must reach the cloud again with no process restarted. Judged as the
 * SQLite run: no acknowledged punch lost, none stored twice, no webhook lost (repeats counted).
 * A delivery whose outcome a restart kept from being written is held by its claim until the lease
 * runs out (a minute and more), so the end waits minutes for webhooks at most.
 *
 * Skipped with its reason without the PostgreSQL server binaries (HAJRI_TEST_PG_BIN, or
 * /usr/lib/postgresql/<version>/bin); failed instead under HAJRI_TEST_REQUIRE_ALL=1.
 * HAJRI_CHAOS_PG_GAP_SECONDS (default 15) is the load between restarts.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import { printTable, seededRandom, sleep } from '../../support/e2e-kit.js'
import { socatAvailability } from '../../support/services.js'
import { chaosSetting, FaultLog } from './chaos-faults.js'
import { chaosRows, expectNothingLost, judgeChaos } from './chaos-judge.js'
import { ChaosRig, PUNCH_CREATED } from './chaos-rig.js'
import { PrivatePostgres, privatePostgresAvailability } from './private-postgres.js'

const postgres = privatePostgresAvailability()
const socat = await socatAvailability()

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)
const GAP_SECONDS = chaosSetting('HAJRI_CHAOS_PG_GAP_SECONDS', 15, 1)
const RESTARTS = ['fast', 'immediate', 'fast'] as const

describe.skipIf(postgres.skipReason !== undefined)(
  `chaos: PostgreSQL restarted under load${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    const random = seededRandom(SEED)
    const cluster = new PrivatePostgres(postgres.bin as string)
    let rig: ChaosRig | undefined

    beforeAll(async () => {
      await cluster.start()
    }, 180_000)

    afterAll(async () => {
      await rig?.close()
      await cluster.stop()
    }, 120_000)

    it(`loses no acknowledged punch and no webhook across pg_ctl restart -m ${RESTARTS.join(', ')}`, {
      timeout: (900 + RESTARTS.length * GAP_SECONDS) * 1000,
    }, async () => {
      const startedAt = Date.now()
      const faults = new FaultLog()
      const chaos = new ChaosRig({
        database: { postgresUrl: cluster.url },
        serial: socat.skipReason === undefined,
        // A hundred punches a second: every restart lands on writes in progress.
        steady: { perTick: 5, tickMs: 50 },
        random,
      })
      rig = chaos
      let phase = 'setting up'
      onTestFailed(async () => {
        printTable(`chaos test, PostgreSQL restarts: failed during ${phase}`, {
          seed: SEED,
          ...faults.rows(),
          'punches sent': chaos.sentCount(),
          'punches acknowledged': chaos.acknowledged().length,
          'webhooks received': chaos.receiver.received.length,
          seconds: Math.round((Date.now() - startedAt) / 1000),
        })
        console.warn(`PostgreSQL log (its end):\n${(await cluster.log()).slice(-4000)}`)
      })
      await chaos.setUp()
      const agent = chaos.agent as NonNullable<typeof chaos.agent>
      const cloud = chaos.cloud as NonNullable<typeof chaos.cloud>
      await sleep(GAP_SECONDS * 1000)
      await chaos.storedGrows('the start')

      const restarts: { mode: string; storedBefore: number; storedAfter: number }[] = []
      for (const mode of RESTARTS) {
        phase = `pg_ctl restart -m ${mode}`
        const storedBefore = await chaos.storedCount()
        await cluster.restart(mode)
        faults.add(`PostgreSQL restart -m ${mode}`)
        // The cloud carries on with no restart of its own: new connections, the same process.
        const storedAfter = await chaos.storedGrows(`pg_ctl restart -m ${mode}`, storedBefore)
        restarts.push({ mode, storedBefore, storedAfter })
        await sleep(GAP_SECONDS * 1000)
      }

      phase = 'the end (settling)'
      const drained = await chaos.settle(600_000)
      phase = 'the verdict'
      const stored = await chaos.readPunchLog()
      const agentExit = await agent.stop()
      const cloudExit = await cloud.stop()
      const agentRetriesRow = async () => {
        const { count, longestMs } = await chaos.agentRetries()
        return `${count} / ${longestMs}`
      }
      const verdict = judgeChaos({
        sentCount: chaos.sentCount(),
        acknowledged: chaos.acknowledged(),
        stored,
        received: chaos.receiver.received,
        secret: chaos.endpoint.secret,
        eventType: PUNCH_CREATED,
      })
      printTable('chaos test, PostgreSQL restarted under load', {
        seed: SEED,
        ...faults.rows(),
        'faults injected': faults.total,
        ...chaosRows(verdict),
        'serial lines written': chaos.serial?.device.sent.length ?? 'n/a (no socat)',
        'punch log before -> after each restart': restarts
          .map((r) => `${r.mode}: ${r.storedBefore} -> ${r.storedAfter}`)
          .join(', '),
        'agent retries to the cloud / longest backoff (ms)': await agentRetriesRow(),
        'agent / cloud processes': `${agent.runs} / ${cloud.runs}`,
        'agent / cloud error lines': `${agent.errors.length} / ${cloud.errors.length}`,
        'agent dead letters': drained.deadLetters.count,
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
      if (cloud.errors.length > 0)
        console.warn(
          'cloud error lines (messages):',
          [...new Set(cloud.errors.map((e) => e.msg))].slice(0, 10),
        )
      const problems = Object.entries(verdict.problems).filter(([, found]) => found.length > 0)
      if (problems.length > 0) console.warn('chaos findings:', Object.fromEntries(problems))

      expect(cloud.unexpectedExits, 'the cloud exited on its own (a crash)').toEqual([])
      expect(agent.unexpectedExits, 'the agent exited on its own (a crash)').toEqual([])
      // One cloud process and one agent process throughout: PostgreSQL's restarts were survived.
      expect({ agent: agent.runs, cloud: cloud.runs }).toEqual({ agent: 1, cloud: 1 })
      expect({ agentExit, cloudExit }, 'exit codes of SIGTERM stops').toEqual({ agentExit: 0, cloudExit: 0 })
      expect(cluster.restarts).toEqual({ fast: 2, immediate: 1 })
      expectNothingLost(verdict)
      expect(drained.deadLetters.count).toBe(0)
    })
  },
)
