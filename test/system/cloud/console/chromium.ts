/**
 * Chromium for the console's browser tests (a system component, as users have it,
 * docs/decisions/0031-real-components-in-tests.md):
 * Debian's package, which .ci/run installs, driven by playwright-core. Found like the components of
 * test/support/services.ts: skipped with a one-line reason when absent, a failure under
 * HAJRI_TEST_REQUIRE_ALL=1.
 */
import { execFile } from 'node:child_process'
import { type Browser, chromium } from 'playwright-core'
import { type Availability, REQUIRE_ALL } from '../../../support/services.js'

export const CHROMIUM_PATH = process.env.HAJRI_TEST_CHROMIUM_PATH || '/usr/bin/chromium'

/**
 * This machine's network is closed: without these, Chromium waits on connections to Google's
 * services (QUIC, component updates, sync) before it answers.
 */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let availability: Promise<Availability> | undefined

export function chromiumAvailability(): Promise<Availability> {
  availability ??= new Promise<Availability>((resolve, reject) => {
    execFile(CHROMIUM_PATH, ['--version'], { timeout: 30_000 }, (err, stdout) => {
      if (!err && /chrom/i.test(stdout)) {
        resolve({ skipReason: undefined })
        return
      }
      const reason = `Chromium not runnable at ${CHROMIUM_PATH} (${err?.message ?? stdout.trim()}); install the chromium package or set HAJRI_TEST_CHROMIUM_PATH`
      if (REQUIRE_ALL) {
        reject(new Error(`HAJRI_TEST_REQUIRE_ALL=1 but ${reason}`))
        return
      }
      console.warn(`skipping console browser tests: ${reason}`)
      resolve({ skipReason: reason })
    })
  })
  return availability
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS })
}
