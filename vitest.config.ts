import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Two projects, chosen by folder (test/README.md maps the tree):
 * - `default` (`npm test`): unit and integration tests, the real PostgreSQL, Redis and Mosquitto
 *   included; meant to stay a few minutes on a two-core machine;
 * - `system` (`npm run test:system`): everything under test/system/, the tests that run the
 *   programs as child processes and kill them or break their network, the long fuzzing runs, and
 *   the console driven in Chromium.
 * The soak is not a vitest test: `npm run soak`.
 */
const SYSTEM = 'test/system/**'

export default defineConfig({
  test: {
    // Tests that need a system component (PostgreSQL, Redis, Mosquitto, socat, Chromium) find it
    // through test/support/services.ts: skipped with a reason when absent, failed under
    // HAJRI_TEST_REQUIRE_ALL=1.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest keeps a core for itself, so on two cores it would run one file at a time; but a test
    // file spends much of its time waiting on PostgreSQL, a socket or a child process, and two
    // files at once fill both cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, SYSTEM],
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: [`${SYSTEM}/*.test.ts`],
        },
      },
    ],
  },
})
