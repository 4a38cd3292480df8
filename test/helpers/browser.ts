import type { TestContext } from 'node:test'
import { existsSync } from 'node:fs'
import type { Browser } from 'playwright-core'

/** Debian's chromium, driven through playwright-core (no browser download). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * Starts a headless chromium, or skips the test loudly when none is installed: `what` names what was then not
 * tested in a browser.
 */
export async function launchChromium(ctx: TestContext, what: string): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    const message = `SKIPPED: no chromium at ${CHROMIUM} (install it: apt-get install -y chromium, or set CHROMIUM_PATH); ${what} was NOT tested in a browser`
    console.warn(`\n*** ${message} ***\n`)
    ctx.skip(message)
    return null
  }
  const { chromium } = await import('playwright-core')
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
}
