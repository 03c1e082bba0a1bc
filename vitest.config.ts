import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that need a system component (PostgreSQL, Redis, Mosquitto, socat, Chromium) find it
    // through test/support/services.ts: skipped with a reason when absent, failed under
    // HAJRI_TEST_REQUIRE_ALL=1.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
