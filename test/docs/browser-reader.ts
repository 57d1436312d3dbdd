import type { Browser } from 'playwright-core';
import { launchChromium, signIn } from '../helpers/chromium.js';
import { allUrls, type PublicUrls } from '../helpers/process.js';

/**
 * The reader's part of a walkthrough that needs a person at a browser (docs/testing.md,
 * "Runnable examples in the documentation"). Two roles:
 * - the user of an OAuth walkthrough: the example prints the sandbox authorization URL and waits
 *   for the address the browser was sent back to. A headless Chromium opens the URL, signs in as
 *   the demo user the document names, passes the second factor (an authenticator app set up the
 *   first time, its codes made with otplib), ticks the first account when accounts are offered,
 *   and approves;
 * - the donor of the giving walkthrough (docs/giving.md, "Try it in the sandbox"): the example
 *   prints the sandbox donor-flow URL and waits for the workflow session id. Chromium opens the
 *   flow in a tab of its own (no opener), chooses the simulated DAF, the amount the document
 *   names, signs in with any username and password, authorizes, and reads the id the last page
 *   shows in the sandbox.
 * Either way the answer is pasted on the example's standard input.
 */

export interface Reader {
  /** The demo user the document tells the reader to sign in as, at authorization URLs. */
  user?: { email: string; password: string };
  /** The gift the document tells the reader to make, at donor-flow URLs: whole dollars, as typed. */
  donor?: { dollars: string };
}

const DEMO_PASSWORD = 'almoner-demo';

/** The documents whose runnable examples wait for a reader, and who that reader signs in as. */
export const READERS: Readonly<Record<string, Reader>> = {
  'docs/bank-data.md': { user: { email: 'owner@example.org', password: DEMO_PASSWORD } },
  'docs/giving.md': { donor: { dollars: '250' } },
  'docs/integrations.md': { user: { email: 'member@example.org', password: DEMO_PASSWORD } },
};

const isAuthorizationUrl = (word: string, urls: PublicUrls) => word.startsWith(`${urls.sandboxDashboard}/oauth/sandbox/authorize?`);
const isDonorFlowUrl = (word: string, urls: PublicUrls) => word.startsWith(`${urls.sandboxDashboard}/connect/`);

/** The URLs for the reader (sandbox authorization and donor-flow URLs) in a piece of the example's output, in order. */
export function readerUrls(output: string, urls: PublicUrls): string[] {
  return output.split(/\s+/).filter((word) => isAuthorizationUrl(word, urls) || isDonorFlowUrl(word, urls));
}

/** One Chromium for the whole file, launched when the first reader is needed. */
export class BrowserReader {
  private browser: Browser | undefined;

  constructor(private readonly urls: PublicUrls) {}

  /** Does what `url` asks of `reader`; resolves with what the reader pastes. */
  play(reader: Reader, url: string): Promise<string> {
    if (isDonorFlowUrl(url, this.urls)) {
      if (!reader.donor) return Promise.reject(new Error(`the document names no donor for ${url}`));
      return this.give(reader.donor, url);
    }
    if (!reader.user) return Promise.reject(new Error(`the document names no user for ${url}`));
    return this.approve(reader.user, url);
  }

  /** Gives `donor.dollars` through the simulated DAF; resolves with the workflow session id the last page shows. */
  private async give(donor: NonNullable<Reader['donor']>, url: string): Promise<string> {
    this.browser ??= await launchChromium();
    const context = await this.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      await page.getByLabel('Search DAF sponsors').fill('sandbox');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('radio', { name: /Sandbox DAF \(simulated sign-in\)/ }).check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Amount in US dollars').fill(donor.dollars);
      await page.getByLabel('One time').check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Username').fill('sandbox-donor');
      await page.getByLabel('Password').fill('anything');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Authorize' }).click();
      const id = (await page.locator('code.workflow-session-id').textContent({ timeout: 30_000 }))?.trim();
      if (!id) throw new Error(`the last page of the flow shows no workflow session id (${page.url()})`);
      return id;
    } finally {
      await context.close();
    }
  }

  /** Approves at `url` as `user`; resolves with the address the browser was sent back to. */
  private async approve(user: NonNullable<Reader['user']>, url: string): Promise<string> {
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
      await signIn(page, user);
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
