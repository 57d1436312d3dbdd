import type { Browser } from 'playwright-core';
import { launchChromium, signIn } from '../helpers/chromium.js';
import { allUrls, type PublicUrls } from '../helpers/process.js';

/**
 * The reader's part of a walkthrough that needs a person at a browser (docs/testing.md,
 * "Runnable examples in the documentation"): the example prints the sandbox authorization URL
 * and waits for the address the browser was sent back to, pasted on its standard input. A
 * headless Chromium does what the document tells the reader to: open the URL, sign in as the
 * demo user it names, pass the second factor (an authenticator app set up the first time, its
 * codes made with otplib), tick the first account when accounts are offered, and approve.
 */

export interface Reader {
  /** The demo user the document tells the reader to sign in as. */
  user: { email: string; password: string };
}

const DEMO_PASSWORD = 'almoner-demo';

/** The documents whose runnable examples wait for a reader, and who that reader signs in as. */
export const READERS: Readonly<Record<string, Reader>> = {
  'docs/bank-data.md': { user: { email: 'owner@example.org', password: DEMO_PASSWORD } },
  'docs/integrations.md': { user: { email: 'member@example.org', password: DEMO_PASSWORD } },
};

/** The authorization URLs (sandbox dashboard) in a piece of the example's output. */
export function authorizationUrls(output: string, urls: PublicUrls): string[] {
  const prefix = `${urls.sandboxDashboard}/oauth/sandbox/authorize?`;
  return output.split(/\s+/).filter((word) => word.startsWith(prefix));
}

/** One Chromium for the whole file, launched when the first reader is needed. */
export class BrowserReader {
  private browser: Browser | undefined;

  constructor(private readonly urls: PublicUrls) {}

  /** Approves at `url` as `reader`; resolves with the address the browser was sent back to. */
  async approve(reader: Reader, url: string): Promise<string> {
    this.browser ??= await launchChromium();
    const context = await this.browser.newContext();
    try {
      const page = await context.newPage();
      const ours = allUrls(this.urls).map((u) => new URL(u).origin);
      // The redirect URI is nobody's here: its request is the answer, whether or not anything serves it.
      const callback = page.waitForRequest((request) => request.isNavigationRequest() && !ours.includes(new URL(request.url()).origin), {
        timeout: 60_000,
      });
      callback.catch(() => undefined);
      await page.goto(url);
      await signIn(page, reader.user);
      const accounts = page.locator('#fdx-accounts input[type="checkbox"]');
      if ((await accounts.count()) > 0) await accounts.first().check();
      await page.getByRole('button', { name: 'Approve' }).click();
      return (await callback).url();
    } finally {
      await context.close();
    }
  }

  async close(): Promise<void> {
    await this.browser?.close();
  }
}
