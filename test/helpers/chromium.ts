import { nextCode, rememberRecoveryCodes, setupCode } from './authenticator.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { decide, gatherFacts } from '../../scripts/ensure-chromium.mjs';
import { authorizationRequest, type Env } from './flow.js';
import type { OAuthTestServer } from './oauth-server.js';

/**
 * Real headless Chromium driven by playwright-core. No network:
 * every host name but 127.0.0.1 fails to resolve at once, so nothing leaves the machine and
 * a client's redirect URI is never served; its URL is read from the request the browser
 * makes, which is how a flow's result (code or error, and state) is observed.
 */

/**
 * The Chromium `npm test`'s pretest step (scripts/ensure-chromium.mjs) made sure of, found the
 * same way: CHROMIUM_PATH, Debian's /usr/bin/chromium, or the one playwright-core installed.
 */
export async function chromiumPath(): Promise<string> {
  const decision = decide(await gatherFacts());
  if (decision.action === 'none') return decision.chromium;
  const why = decision.action === 'fail' ? decision.message : `none installed (${decision.command} would install one)`;
  throw new Error(`no Chromium for the browser tests: ${why}; "npm test" provides one before the tests (node scripts/ensure-chromium.mjs)`);
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
    ],
  });
}

/**
 * A Chromium for the test file and a fresh browser context for each test, closed after it.
 * Read `browser` and `context` inside tests and hooks: they are filled in by the fixture's own.
 */
export function useChromium(): { browser: Browser; context: BrowserContext } {
  const chromiumFixture = {} as { browser: Browser; context: BrowserContext };
  beforeAll(async () => {
    chromiumFixture.browser = await launchChromium();
  });
  afterAll(async () => chromiumFixture.browser?.close());
  beforeEach(async () => {
    chromiumFixture.context = await chromiumFixture.browser.newContext();
  });
  afterEach(async () => chromiumFixture.context?.close());
  return chromiumFixture;
}

export interface SeenDocument {
  url: string;
  status: number;
  headers: Record<string, string>;
  /** The body of a non-redirect response ('' when the browser no longer had it). */
  html: string;
}

/**
 * Every document the context loads from our servers, for header and markup assertions. The
 * body is read as the response arrives: the browser forgets it once the page is left.
 */
export function collectDocuments(context: BrowserContext, server: OAuthTestServer): Promise<SeenDocument>[] {
  const ours = Object.values(server.urls);
  const documents: Promise<SeenDocument>[] = [];
  context.on('response', (response) => {
    if (response.request().resourceType() !== 'document' || !ours.some((origin) => response.url().startsWith(origin))) return;
    documents.push(
      (async () => {
        const status = response.status();
        // Both asked for at once, as the response arrives: a page that moves on at once (a form
        // posted on load) may be gone by the time a body is read. A response whose page is
        // gone keeps the headers the browser reported with it.
        const headers = response.allHeaders().catch(() => response.headers());
        const html = status >= 300 && status < 400 ? '' : await response.text().catch(() => '');
        return { url: response.url(), status, headers: await headers, html };
      })(),
    );
  });
  return documents;
}

export interface BrowserAuthorization {
  verifier: string;
  state: string;
  nonce: string;
  /** Resolves with the redirect URI the browser was sent to (code or error in its query). */
  callback: Promise<URL>;
}

export interface StartOptions {
  environment: Env;
  clientId: string;
  redirectUri: string;
  scope: string;
  extraParams?: Record<string, string>;
}

/** Opens the authorization endpoint in `page` and watches for the redirect back to the client. */
export async function startAuthorization(page: Page, server: OAuthTestServer, options: StartOptions): Promise<BrowserAuthorization> {
  const { url, verifier, state, nonce } = await authorizationRequest(server, options);
  // The redirect URI is not served (and a redirect hop bypasses route handlers), so the
  // browser shows its error page after requesting it; waiting for that page keeps the tab
  // settled for whatever the test does next.
  const errorPage = page.waitForEvent('framenavigated', {
    predicate: (frame) => frame === page.mainFrame() && frame.url().startsWith('chrome-error:'),
    timeout: 15_000,
  });
  const callback = page
    // Long enough for a sign-in, a second factor and an approval on a loaded machine.
    .waitForRequest((request) => request.url().startsWith(`${options.redirectUri}?`), { timeout: 30_000 })
    .then(async (request) => {
      await errorPage.catch(() => undefined);
      return new URL(request.url());
    });
  errorPage.catch(() => undefined);
  callback.catch(() => undefined);
  // A signed-in user whose authorization covers the request goes straight back to the
  // application: this navigation itself then ends at the redirect URI. Not an error here.
  await page.goto(url.toString()).catch(async (error: Error) => {
    if (!/ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED/.test(error.message)) throw error;
    await callback;
  });
  return { verifier, state, nonce, callback };
}

export async function signIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await Promise.all([
    page.waitForNavigation({ timeout: 15_000 }).catch(() => undefined),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  await passSecondFactor(page, user.email);
}

/**
 * What a person does when Almoner asks for a second factor after the password or before an
 * approval: types the app's code, or (no app yet) sets one up from the page's key, notes the
 * recovery codes and continues. Nothing when the page asks for neither.
 */
export async function passSecondFactor(page: Page, email: string): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    const heading = (
      await page
        .locator('h1')
        .first()
        .textContent({ timeout: 2_000 })
        .catch(() => null)
    )?.trim();
    if (heading === 'Enter your second factor' || heading === 'Confirm it is you') {
      await page.getByLabel('Code from your app').fill(await nextCode(email));
      await Promise.all([
        page.waitForNavigation({ timeout: 15_000 }).catch(() => undefined),
        page.getByRole('button', { name: 'Verify' }).click(),
      ]);
    } else if (heading === 'Set up a second factor') {
      const key = (await page.locator('.secret code').textContent())!.trim();
      await page.getByLabel('Code from your app').fill(setupCode(email, key));
      await Promise.all([page.waitForNavigation({ timeout: 15_000 }), page.getByRole('button', { name: 'Turn on' }).click()]);
      rememberRecoveryCodes(email, await page.locator('ul.codes code').allTextContents());
      await Promise.all([
        page.waitForNavigation({ timeout: 15_000 }).catch(() => undefined),
        page.locator('a.button-link.primary').click(),
      ]);
    } else {
      return;
    }
  }
}

/** Every cookie the pages set is HttpOnly and SameSite Lax or Strict (docs/oauth.md, "Security of the pages"). */
export async function expectCookiesLocked(context: BrowserContext): Promise<void> {
  const cookies = await context.cookies();
  expect(cookies.length).toBeGreaterThan(0);
  for (const cookie of cookies) {
    expect({ name: cookie.name, httpOnly: cookie.httpOnly }).toEqual({ name: cookie.name, httpOnly: true });
    expect(['Lax', 'Strict'], `${cookie.name} SameSite`).toContain(cookie.sameSite);
  }
}
