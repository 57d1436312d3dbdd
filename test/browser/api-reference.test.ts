import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_REFERENCE_POLICY } from '../../src/http/security-headers.js';
import { launchChromium } from '../helpers/chromium.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** The API reference (/docs/api) in real headless Chromium: Redoc renders our document, from our origin only. */
const { server } = useOAuthServer();
let browser: Browser;
let context: BrowserContext;
/** Every request the page made, and everything the console reported as an error (CSP violations included). */
let requests: string[];
let errors: string[];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
  requests = [];
  errors = [];
  context.on('request', (request) => requests.push(request.url()));
});
afterEach(async () => context?.close());

async function open(url: string): Promise<{ page: Page; csp: string | null }> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return { page, csp: (await response!.allHeaders())['content-security-policy'] ?? null };
}

/** Only the dashboard's own origin was asked for anything (blob: is Redoc's search worker). */
function expectOnly(origin: string) {
  const elsewhere = requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));
  expect(elsewhere).toEqual([]);
  expect(new URL(origin).hostname).toBe('127.0.0.1');
}

describe('API reference page', () => {
  it('renders the operations of the newest version from the dashboard origin only, within its CSP', async () => {
    const { page, csp } = await open(`${server.urls.dashboard}/docs/api`);
    expect(csp).toBe(API_REFERENCE_POLICY);
    // Operation titles (the route specs' summaries), a request body and a 201.
    await expect(
      page
        .getByRole('heading', { name: 'Subscribe a webhook URL to one event category; returns the signing secret only when generated' })
        .first()
        .waitFor(),
    ).resolves.toBeUndefined();
    await expect(page.getByRole('heading', { name: "List the provider's giving pools" }).first().isVisible()).resolves.toBe(true);
    await expect(page.getByText('Request Body schema: application/json').first().isVisible()).resolves.toBe(true);
    await expect(
      page
        .locator('button', { hasText: /^\s*201\s*Created/ })
        .first()
        .count(),
    ).resolves.toBeGreaterThan(0);
    // The API host it documents is named, and the raw document is a link away.
    await expect(page.getByRole('navigation', { name: 'API versions' }).textContent()).resolves.toContain(server.urls.api);
    await expect(page.getByRole('link', { name: 'OpenAPI document' }).getAttribute('href')).resolves.toBe(
      '/docs/api/openapi.json?version=2026-04-01',
    );
    // Each operation's credentials once each: "accessToken or apiKey", never "accessToken or accessToken or apiKey"
    // (Redoc draws the "or" between the names with CSS, so the text has the names side by side).
    const text = (await page.locator('body').textContent()) ?? '';
    expect(text).toContain('Authorizations:accessTokenapiKey');
    expect(text).not.toMatch(/accessToken(\s*or\s*)?accessToken/);
    expectOnly(server.urls.dashboard);
    expect(errors).toEqual([]);
    expect(requests.some((url) => url.endsWith('/docs/api/redoc.standalone.js'))).toBe(true);
  });

  it('shows an older version on the sandbox dashboard, without the operations it lacks', async () => {
    const { page } = await open(`${server.urls.sandboxDashboard}/docs/api?version=2026-01-15`);
    await expect(
      page.getByRole('heading', { name: "List the authorizing nonprofit's donations, newest first" }).first().waitFor(),
    ).resolves.toBeUndefined();
    await expect(page.getByRole('heading', { name: "List the provider's giving pools" }).count()).resolves.toBe(0);
    await expect(page.getByRole('navigation', { name: 'API versions' }).textContent()).resolves.toContain(server.urls.sandboxApi);
    expectOnly(server.urls.sandboxDashboard);
    expect(errors).toEqual([]);
  });
});
