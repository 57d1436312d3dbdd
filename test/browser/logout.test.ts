/**
 * RP-Initiated Logout 1.0 (docs/oauth.md, "Signing out from an application") in Chromium, with a
 * real relying-party library: openid-client discovers the end-session endpoint, runs the code
 * flow for an ID token, and builds the end-session URL (buildEndSessionUrl). The browser has no
 * network, so an application's address is never served: where the browser was sent is read
 * from the request it makes.
 */
import * as openid from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collectDocuments, expectCookiesLocked, signIn, useChromium } from '../helpers/chromium.js';
import { endpoints, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const SIGNED_OUT = 'https://app.example.org/signed-out';
const OTHER_SIGNED_OUT = 'https://other.example.org/signed-out';

const {
  server,
  staff,
  clients,
  testDatabase: t,
} = useOAuthServer({
  clients: {
    books: {
      environment: 'production',
      name: 'Books Sync',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [SIGNED_OUT],
      scopes: ['openid', 'read_only'],
    },
    other: {
      environment: 'production',
      name: 'Other App',
      redirectUris: ['https://other.example.org/callback'],
      postLogoutRedirectUris: [OTHER_SIGNED_OUT],
      scopes: ['openid', 'read_only'],
    },
  },
});
const chromium = useChromium();

type Registered = { client_id: string; client_secret: string };

/** The relying party's configuration, from discovery (plain http only because the test runs on loopback). */
async function relyingParty(client: Registered): Promise<openid.Configuration> {
  return openid.discovery(
    new URL(endpoints(server, 'production').api),
    client.client_id,
    undefined,
    openid.ClientSecretBasic(client.client_secret),
    { execute: [openid.allowInsecureRequests] },
  );
}

/** Resolves with the first request the browser makes to `prefix` (an application's address: never served). */
function requestTo(page: Page, prefix: string): Promise<URL> {
  return page.waitForRequest((request) => request.url().startsWith(prefix), { timeout: 15_000 }).then((request) => new URL(request.url()));
}

/** Goes to `url`, which ends at an application's address the browser cannot reach. */
async function gotoApplication(page: Page, url: string): Promise<void> {
  await page.goto(url).catch((error: Error) => {
    if (!/ERR_NAME_NOT_RESOLVED/.test(error.message)) throw error;
  });
}

/** Signs in through the hosted pages and approves: the relying party's code flow, ending with its tokens. */
async function signInThroughApplication(page: Page, client: Registered, redirectUri = REDIRECT) {
  const config = await relyingParty(client);
  const verifier = openid.randomPKCECodeVerifier();
  const state = openid.randomState();
  const nonce = openid.randomNonce();
  const url = openid.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid read_only',
    code_challenge: await openid.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const callback = requestTo(page, `${redirectUri}?`);
  await gotoApplication(page, url.href);
  if (await page.getByLabel('Password').isVisible()) await signIn(page, staff.users.member);
  if (await page.getByRole('button', { name: 'Approve' }).isVisible()) await page.getByRole('button', { name: 'Approve' }).click();
  const tokens = await openid.authorizationCodeGrant(config, await callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
  expect(tokens.id_token).toBeTruthy();
  return { config, tokens, idToken: tokens.id_token! };
}

/** Whether this browser is signed in: the dashboard's /account shows the account, or sends it to sign in. */
async function signedIn(context: BrowserContext): Promise<boolean> {
  const page = await context.newPage();
  await page.goto(`${server.urls.dashboard}/account`);
  const path = new URL(page.url()).pathname;
  await page.close();
  expect(['/account', '/sign-in']).toContain(path);
  return path === '/account';
}

/** Whether a new authorization request shows the sign-in form (no session) rather than going on without it. */
async function authorizationAsksToSignIn(context: BrowserContext, client: Registered): Promise<boolean> {
  const page = await context.newPage();
  const config = await relyingParty(client);
  const url = openid.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid read_only',
    code_challenge: await openid.calculatePKCECodeChallenge(openid.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    state: openid.randomState(),
    nonce: openid.randomNonce(),
  });
  await gotoApplication(page, url.href);
  const asks = await page.getByLabel('Password').isVisible();
  await page.close();
  return asks;
}

const logoutEvents = (clientId: string) =>
  t.db.selectFrom('audit_events').selectAll().where('event', '=', 'logout').where('client_id', '=', clientId).execute();

describe('signing out from an application (RP-Initiated Logout)', () => {
  it('with an ID token of this session, the registered return address and state: signs out without asking, back at the application with its state', async () => {
    const { context } = chromium;
    const documents = collectDocuments(context, server);
    const page = await context.newPage();
    const { config, tokens, idToken } = await signInThroughApplication(page, clients.books);
    expect(await signedIn(context)).toBe(true);
    const before = (await logoutEvents(clients.books.client_id)).length;

    const state = openid.randomState();
    const endSession = openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state });
    expect(endSession.href.startsWith(`${endpoints(server, 'production').endSession}?`)).toBe(true);
    const back = requestTo(page, `${SIGNED_OUT}?`);
    await gotoApplication(page, endSession.href);
    expect((await back).searchParams.get('state')).toBe(state);

    // The session is gone, for the flow and the dashboard alike.
    expect(await authorizationAsksToSignIn(context, clients.books)).toBe(true);
    expect(await signedIn(context)).toBe(false);
    // No confirmation was shown (nothing was clicked): the page posted the provider's form at
    // once, under a policy that runs our script files only and lets the form end at the
    // application (its markup: "works without JavaScript" below).
    const seen = await Promise.all(documents);
    const endSessionPage = seen.find((d) => new URL(d.url).pathname === '/oauth/end-session');
    expect(endSessionPage?.status).toBe(200);
    expect(endSessionPage?.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action 'self' https://app.example.org; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(seen.find((d) => new URL(d.url).pathname === '/oauth/end-session/confirm')?.status).toBe(303);
    await expectCookiesLocked(context);
    // Recorded as the dashboard's own sign-out is, with the application; its access is untouched.
    const events = await logoutEvents(clients.books.client_id);
    expect(events.length).toBe(before + 1);
    expect(events.at(-1)).toMatchObject({
      environment: 'production',
      actor_user_id: staff.users.member.id,
      details: { via: 'end_session' },
    });
    expect(
      (await tokenRequest(server, 'production', clients.books, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }))
        .status,
    ).toBe(200);
  });

  it('without an ID token: asks, naming the application; "Sign out" signs out and returns to the application with its state', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config } = await signInThroughApplication(page, clients.books);
    const state = openid.randomState();
    await page.goto(openid.buildEndSessionUrl(config, { post_logout_redirect_uri: SIGNED_OUT, state }).href);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign out of Almoner?');
    await expect(page.locator('main').textContent()).resolves.toContain('Books Sync');
    const back = requestTo(page, `${SIGNED_OUT}?`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await back).searchParams.get('state')).toBe(state);
    expect(await signedIn(context)).toBe(false);
  });

  it('without a return address: "Sign out" ends on the signed-out page', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config } = await signInThroughApplication(page, clients.books);
    await page.goto(openid.buildEndSessionUrl(config).href);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth/end-session/success');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('You are signed out');
    expect(await signedIn(context)).toBe(false);
  });

  it('"Stay signed in" keeps the session: back at the application, or told so without a return address', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config } = await signInThroughApplication(page, clients.books);
    const state = openid.randomState();
    await page.goto(openid.buildEndSessionUrl(config, { post_logout_redirect_uri: SIGNED_OUT, state }).href);
    const back = requestTo(page, `${SIGNED_OUT}?`);
    await page.getByRole('button', { name: 'Stay signed in' }).click();
    expect((await back).searchParams.get('state')).toBe(state);
    expect(await signedIn(context)).toBe(true);

    await page.goto(openid.buildEndSessionUrl(config).href);
    await page.getByRole('button', { name: 'Stay signed in' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth/end-session/success');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('You are still signed in');
    expect(await signedIn(context)).toBe(true);
    expect(await authorizationAsksToSignIn(context, clients.books)).toBe(false);
  });

  it('an unregistered return address is refused with a page: no redirect, still signed in', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config, idToken } = await signInThroughApplication(page, clients.books);
    const addresses = ['https://app.example.org/elsewhere', 'https://evil.example.org/signed-out', OTHER_SIGNED_OUT];
    const sentThere: string[] = [];
    page.on('request', (request) => {
      if (addresses.some((address) => request.url().startsWith(address))) sentThere.push(request.url());
    });
    for (const address of addresses) {
      const response = await page.goto(
        openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: address, state: 's' }).href,
      );
      expect(response?.status(), address).toBe(400);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('We could not sign you out here');
      await expect(page.locator('main').textContent()).resolves.toContain('post_logout_redirect_uri not registered');
    }
    expect(sentThere).toEqual([]);
    expect(await signedIn(context)).toBe(true);
  });

  it("an ID token of another application is refused: its client_id does not match the hint's", async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { idToken } = await signInThroughApplication(page, clients.books);
    const other = await relyingParty(clients.other);
    // openid-client names its own client_id beside the hint it was handed.
    const response = await page.goto(
      openid.buildEndSessionUrl(other, { id_token_hint: idToken, post_logout_redirect_uri: OTHER_SIGNED_OUT, state: 's' }).href,
    );
    expect(response?.status()).toBe(400);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('We could not sign you out here');
    await expect(page.locator('main').textContent()).resolves.toContain('client_id does not match the provided id_token_hint');
    expect(await signedIn(context)).toBe(true);
  });

  it('a return address is matched as redirect URIs are (an upper-case host, :443)', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config, idToken } = await signInThroughApplication(page, clients.books);
    const back = requestTo(page, `${SIGNED_OUT}?`);
    await gotoApplication(
      page,
      openid.buildEndSessionUrl(config, {
        id_token_hint: idToken,
        post_logout_redirect_uri: 'https://APP.EXAMPLE.ORG:443/signed-out',
        state: 'upper',
      }).href,
    );
    expect((await back).searchParams.get('state')).toBe('upper');
    expect(await signedIn(context)).toBe(false);
  });

  it('an ID token of an earlier session asks first; a browser that is not signed in goes straight back', async () => {
    const { context } = chromium;
    const page = await context.newPage();
    const { config, idToken } = await signInThroughApplication(page, clients.books);
    const first = requestTo(page, `${SIGNED_OUT}?`);
    await gotoApplication(
      page,
      openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'first' }).href,
    );
    expect((await first).searchParams.get('state')).toBe('first');
    // Not signed in: nothing to end, so the browser returns to the application with its state.
    const again = requestTo(page, `${SIGNED_OUT}?`);
    await gotoApplication(
      page,
      openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'again' }).href,
    );
    expect((await again).searchParams.get('state')).toBe('again');
    // Signed in again: the old ID token is not this session's, so the user is asked. Times are
    // whole seconds, so the new sign-in waits for a second after the token's.
    const issuedAt = (JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { iat: number }).iat;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (issuedAt + 1) * 1000 - Date.now())));
    await signInThroughApplication(page, clients.books);
    await page.goto(openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT }).href);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign out of Almoner?');
  });

  it('works without JavaScript: the page that needs no decision shows its button', async () => {
    const context = await chromium.browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const { config, idToken } = await signInThroughApplication(page, clients.books);
      await page.goto(
        openid.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'no-script' }).href,
      );
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Signing you out');
      // The provider's form (its confirm route and xsrf secret), our script file, no inline script.
      const html = await page.content();
      expect(html).toMatch(/<form method="post" action="http:\/\/127\.0\.0\.1:\d+\/oauth\/end-session\/confirm" data-auto-submit="">/);
      expect(html).toMatch(/<input type="hidden" name="xsrf" value="[0-9a-f]{48}">/);
      expect([...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.trim())).toEqual(['src="/static/auto-submit.js" defer=""']);
      await expect(page.getByRole('button', { name: 'Stay signed in' }).count()).resolves.toBe(0);
      const back = requestTo(page, `${SIGNED_OUT}?`);
      await Promise.all([back, page.getByRole('button', { name: 'Continue' }).click()]);
      expect((await back).searchParams.get('state')).toBe('no-script');
      expect(await signedIn(context)).toBe(false);
    } finally {
      await context.close();
    }
  });
});
