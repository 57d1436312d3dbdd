/**
 * Forged and hostile sign-out requests (docs/security.md, "Forged sign-out requests and open
 * redirects through the end-session endpoint"), over HTTP with a cookie-keeping user agent: a
 * site that sends a signed-in browser to the end-session endpoint, posts its confirmation form,
 * or uses it to redirect the browser elsewhere.
 */
import { describe, expect, it } from 'vitest';
import type { FormBrowser } from '../helpers/browser.js';
import { authorizationRequest, endpoints, obtainTokens } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const SIGNED_OUT = 'https://app.example.org/signed-out';

const { server, staff, clients } = useOAuthServer({
  clients: {
    app: {
      environment: 'production',
      name: 'Books Sync',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [SIGNED_OUT],
      scopes: ['openid', 'read_only'],
    },
    sandboxApp: { environment: 'sandbox', redirectUris: ['http://127.0.0.1:9999/callback'], scopes: ['openid', 'read_only'] },
  },
});

const endSession = () => endpoints(server, 'production').endSession;
const url = (params: Record<string, string>) => `${endSession()}?${new URLSearchParams(params)}`;

/** A browser signed in through a flow of the production client, with the flow's ID Token. */
async function signedInBrowser() {
  const flow = await obtainTokens(server, {
    environment: 'production',
    client: clients.app,
    clientId: clients.app.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only',
    login: staff.users.owner,
  });
  expect(flow.tokens.status).toBe(200);
  return { browser: flow.browser, idToken: flow.tokens.body.id_token as string };
}

/** Whether `browser` is still signed in: a new authorization goes on without the sign-in form. */
async function stillSignedIn(browser: FormBrowser): Promise<boolean> {
  const next = await authorizationRequest(server, {
    environment: 'production',
    clientId: clients.app.client_id,
    redirectUri: REDIRECT,
    scope: 'openid read_only',
  });
  const page = await browser.request(next.url.href);
  return page.location !== undefined || !page.html.includes('name="password"');
}

describe('forged sign-out requests', () => {
  it('a link without an ID Token of this session only asks: the session stays until the user answers', async () => {
    const { browser } = await signedInBrowser();
    for (const params of [{}, { client_id: clients.app.client_id, post_logout_redirect_uri: SIGNED_OUT, state: 'x' }] as Record<
      string,
      string
    >[]) {
      const page = await browser.request(url(params));
      expect(page.status).toBe(200);
      expect(page.html).toContain('Sign out of Almoner?');
      expect(page.html).not.toContain('data-auto-submit');
    }
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('the confirmation refuses a post without the secret of the form shown to this browser', async () => {
    const { browser } = await signedInBrowser();
    const other = await signedInBrowser();
    const shown = await browser.request(url({ client_id: clients.app.client_id }));
    const theirs = await other.browser.request(url({ client_id: clients.app.client_id }));
    const theirSecret = /name="xsrf" value="([^"]+)"/.exec(theirs.html)![1]!;
    for (const form of [
      { logout: 'yes' },
      { logout: 'yes', xsrf: '' },
      { logout: 'yes', xsrf: theirSecret },
      { logout: 'yes', xsrf: 'a'.repeat(48) },
    ] as Record<string, string>[]) {
      const refused = await browser.request(`${endSession()}/confirm`, { method: 'POST', form });
      expect(refused.status, JSON.stringify(form)).toBe(400);
      expect(refused.location).toBeUndefined();
      expect(refused.html).toContain('We could not sign you out here');
    }
    // A post the browser marks as cross-site is refused before the provider sees it.
    const crossSite = await fetch(`${endSession()}/confirm`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: browser.cookieHeader(new URL(endSession())),
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        accept: 'text/html',
      },
      body: new URLSearchParams({ logout: 'yes', xsrf: /name="xsrf" value="([^"]+)"/.exec(shown.html)![1]! }),
    });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toContain('We could not accept this form');
    expect(await stillSignedIn(browser)).toBe(true);
    // The form that was shown still works.
    const done = await browser.submit(shown, '/confirm', { logout: 'yes' });
    expect(done.html).toContain('You are signed out');
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('never redirects to an address the application did not register, nor for a hint that is not ours', async () => {
    const { browser, idToken } = await signedInBrowser();
    const [header, payload] = idToken.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const reSigned = (changes: Record<string, unknown>) =>
      `${header}.${Buffer.from(JSON.stringify({ ...claims, ...changes })).toString('base64url')}.${idToken.split('.')[2]}`;
    const sandboxToken = (
      await obtainTokens(server, {
        environment: 'sandbox',
        client: clients.sandboxApp,
        clientId: clients.sandboxApp.client_id,
        redirectUri: 'http://127.0.0.1:9999/callback',
        scope: 'openid read_only',
        login: staff.users.owner,
      })
    ).tokens.body.id_token as string;
    const attempts: [string, Record<string, string>, number][] = [
      [
        'an unregistered address',
        { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example.org/signed-out', state: 's' },
        400,
      ],
      [
        'a registered address with a query added',
        { id_token_hint: idToken, post_logout_redirect_uri: `${SIGNED_OUT}?next=https://evil.example.org`, state: 's' },
        400,
      ],
      ['a hint whose payload was changed', { id_token_hint: reSigned({ sub: 'someone-else' }), post_logout_redirect_uri: SIGNED_OUT }, 400],
      ['a hint that is no JWT', { id_token_hint: 'not-a-token', post_logout_redirect_uri: SIGNED_OUT }, 400],
      [
        'a hint for an audience list',
        { id_token_hint: reSigned({ aud: [clients.app.client_id] }), post_logout_redirect_uri: SIGNED_OUT },
        400,
      ],
      ['an ID Token of the other environment', { id_token_hint: sandboxToken, post_logout_redirect_uri: SIGNED_OUT }, 400],
      ['an unknown client_id', { client_id: 'live_nosuchclient000', post_logout_redirect_uri: SIGNED_OUT }, 400],
      ['a client_id with a NUL byte', { client_id: 'live_\u0000', post_logout_redirect_uri: SIGNED_OUT }, 400],
    ];
    for (const [label, params, status] of attempts) {
      const page = await browser.request(url(params));
      expect({ label, status: page.status, redirected: page.location?.href }).toEqual({ label, status, redirected: undefined });
      expect(page.html, label).toMatch(/We could not sign you out here|Unknown application/);
    }
    // A parameter given twice is refused too.
    const twice = await browser.request(
      `${url({ id_token_hint: idToken })}&post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT)}&post_logout_redirect_uri=${encodeURIComponent(SIGNED_OUT)}`,
    );
    expect(twice.status).toBe(400);
    expect(await stillSignedIn(browser)).toBe(true);
  });
});
