/**
 * What the console's browser tests share: a real hajri-cloud listening on 127.0.0.1 (the app over a
 * throwaway SQLite database, its webhook dispatcher running with 127.0.0.1 allowlisted), a real
 * webhook receiver, Chromium, screenshots, and waiting for what happens in the background.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { TestCloud } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { launchChromium } from './chromium.js'

/** Gitignored: where the screenshots of every page go (`test-results/console/*.png`). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../../test-results/console/', import.meta.url))

export class ConsoleFixture {
  readonly cloud = new TestCloud('sqlite', {
    // One attempt: a delivery made to fail is given up on at once, ready to be retried by hand.
    webhooks: { allowlist: ['127.0.0.1'], retrySchedule: [0] },
  })
  readonly receiver = new WebhookReceiver()
  browser: Browser | undefined
  baseUrl = ''
  /** What went wrong in any page: uncaught errors, CSP refusals, server errors. */
  readonly pageProblems: string[] = []

  async start(): Promise<void> {
    await this.receiver.start()
    await this.cloud.start()
    await this.cloud.app.listen({ host: '127.0.0.1', port: 0 })
    const address = this.cloud.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('hajri-cloud is not listening')
    this.baseUrl = `http://127.0.0.1:${address.port}`
    this.browser = await launchChromium()
    await mkdir(SCREENSHOT_DIR, { recursive: true })
  }

  async stop(): Promise<void> {
    await this.browser?.close()
    await this.cloud.stop()
    await this.receiver.stop()
  }

  /** A browser profile of its own (cookies, storage), watched for problems. */
  async newPage(): Promise<{ context: BrowserContext; page: Page }> {
    if (!this.browser) throw new Error('the fixture is not started')
    const context = await this.browser.newContext({
      baseURL: this.baseUrl,
      viewport: { width: 1280, height: 900 },
      locale: 'en-GB',
      timezoneId: 'Asia/Kolkata',
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: this.baseUrl })
    const page = await context.newPage()
    page.on('pageerror', (err) => this.pageProblems.push(`uncaught in the page: ${err.message}`))
    page.on('console', (message) => {
      // Chromium reports a CSP refusal on the console; any is a defect of the console or of the policy.
      if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
        this.pageProblems.push(`CSP: ${message.text()}`)
      }
    })
    page.on('response', (response) => {
      if (response.status() >= 500) this.pageProblems.push(`${response.status()} from ${response.url()}`)
    })
    return { context, page }
  }

  /** A full-page screenshot, `test-results/console/<name>.png`. */
  async screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true })
  }
}

/**
 * Resolves once `check` returns a value other than undefined or false, trying again until then (the
 * dispatcher and the pages work in the background); fails with `what` after `timeoutMs`, a bound on
 * waiting, not a measure of speed.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined && value !== false) return value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      throw new Error(`still waiting for ${what} after ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The text of the page's h1, once it is there. */
export async function heading(page: Page): Promise<string> {
  return (await page.locator('main h1').first().textContent({ timeout: 10_000 }))?.trim() ?? ''
}

/** The names of every button in the page (or in the open dialog, when there is one). */
export async function buttonNames(page: Page): Promise<string[]> {
  const buttons = page.getByRole('button')
  const names: string[] = []
  for (const button of await buttons.all()) {
    names.push(((await button.getAttribute('aria-label')) ?? (await button.textContent()) ?? '').trim())
  }
  return names
}
