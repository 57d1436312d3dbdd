import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/memberships.js';
import { launchChromium, signIn } from '../helpers/chromium.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { cryptoPassphrase, startApache, type ApacheSite } from './helpers/apache.js';

/**
 * Apache httpd with mod_auth_openidc (Debian's libapache2-mod-auth-openidc) as the relying
 * party in front of /protected/, in real headless Chromium: login, organization, consent, the
 * page served with the OIDC claims, refreshes through mod_auth_openidc, and logout. Sandbox
 * clients, because Apache listens on plain http on loopback. docs/integrations.md shows these
 * directives.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let browser: Browser;
let context: BrowserContext;
let approver: Staff['users']['owner'];
let chosenOrg: { id: string; name: string };

beforeAll(async () => {
  browser = await launchChromium();
  // An approver in two nonprofits, so the organization choice is shown.
  const [first, second] = await Promise.all([createStaff(t.db), createStaff(t.db)]);
  await addMember(t.db, { org: second.ein, email: first.users.owner.email, role: 'admin' });
  approver = first.users.owner;
  const name = (await t.db.selectFrom('organizations').select('name').where('id', '=', second.orgId).executeTakeFirstOrThrow()).name;
  chosenOrg = { id: second.orgId, name };
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(async () => context?.close());

/** The mod_auth_openidc directives of docs/integrations.md, for `client` on `origin`. */
function modAuthOpenidcConfig(issuer: string, origin: string, client: { client_id: string; client_secret: string }, scope: string): string {
  return [
    `OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration`,
    `OIDCClientID ${client.client_id}`,
    `OIDCClientSecret ${client.client_secret}`,
    `OIDCRedirectURI ${origin}/protected/redirect_uri`,
    `OIDCCryptoPassphrase ${cryptoPassphrase()}`,
    `OIDCScope "${scope}"`,
    'OIDCProviderTokenEndpointAuth client_secret_basic',
    'OIDCPKCEMethod S256',
    'OIDCPassClaimsAs environment',
    // Refresh when the access token has less than this left: here on every request, since it
    // lives 900 s. With logout_on_error a refused refresh ends the session, as vendors set it.
    'OIDCRefreshAccessTokenBeforeExpiry 3600 logout_on_error',
  ].join('\n');
}

/** Apache in front of /protected/, its mod_auth_openidc configured for a newly registered sandbox client. */
async function apacheFor(scope: string): Promise<ApacheSite> {
  return startApache({
    async oidcConfig(origin) {
      const client = await server.registerClient({
        environment: 'sandbox',
        name: 'Apache intranet',
        redirectUris: [`${origin}/protected/redirect_uri`],
        postLogoutRedirectUris: [`${origin}/signed-out`],
      });
      return modAuthOpenidcConfig(server.urls.sandboxApi, origin, client, scope);
    },
  });
}

type Claims = Record<string, string>;

/** The protected page's JSON (the CGI prints the OIDC_* variables mod_auth_openidc set). */
async function claimsOn(page: Page, apache: ApacheSite): Promise<Claims> {
  const text = (await page.locator('body').textContent()) ?? '';
  try {
    return JSON.parse(text) as Claims;
  } catch {
    throw new Error(`not the claims page at ${page.url()}: ${text.trim().slice(0, 200)}\n--- Apache's log:\n${apache.log()}`);
  }
}

/** The access token Almoner stored under this hash (the page shows the hash of the one Apache holds). */
async function storedAccessToken(hash: string) {
  const row = await t.db
    .selectFrom('oidc_models')
    .select(['payload', 'expires_at'])
    .where('model', '=', 'AccessToken')
    .where('id', '=', hash)
    .executeTakeFirst();
  return row && { ...(row.payload as { scope: string; accountId: string }), live: row.expires_at !== null && row.expires_at > new Date() };
}

/** Visits the protected page, signs in, chooses the nonprofit, approves; returns the page's claims and the authorization request. */
async function loginThroughApache(page: Page, apache: ApacheSite): Promise<{ claims: Claims; authorizationRequest: URL }> {
  const authorizationRequest = page.waitForRequest((request) =>
    request.url().startsWith(`${server.urls.sandboxDashboard}/oauth/sandbox/authorize?`),
  );
  await page.goto(`${apache.origin}/protected/claims`);
  await signIn(page, approver);
  await page.getByRole('button', { name: chosenOrg.name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Apache intranet wants access to ${chosenOrg.name}`);
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(`${apache.origin}/protected/claims`);
  return { claims: await claimsOn(page, apache), authorizationRequest: new URL((await authorizationRequest).url()) };
}

/** Loads the protected page again, failing if mod_auth_openidc sent the browser back to Almoner (a refused refresh ends its session). */
async function reload(page: Page, apache: ApacheSite): Promise<Claims> {
  const toAlmoner: string[] = [];
  const watch = (request: { url(): string }) => {
    if (request.url().startsWith(`${server.urls.sandboxDashboard}/oauth/`)) toAlmoner.push(request.url());
  };
  page.on('request', watch);
  await page.goto(`${apache.origin}/protected/claims`);
  page.off('request', watch);
  const claims = await claimsOn(page, apache);
  expect(toAlmoner, `mod_auth_openidc ended its session:\n${apache.log()}`).toEqual([]);
  return claims;
}

describe('mod_auth_openidc in front of Apache (openid read_only)', () => {
  let apache: ApacheSite;
  beforeAll(async () => {
    apache = await apacheFor('openid read_only');
  });
  afterAll(async () => apache?.close());

  it('logs in through Almoner and serves the page with the claims, refreshes the access token on the next request, and logs out', async () => {
    const page = await context.newPage();
    const { claims, authorizationRequest } = await loginThroughApache(page, apache);

    // mod_auth_openidc sends nonce and PKCE on its own.
    expect(authorizationRequest.searchParams.get('nonce')).toMatch(/.{16,}/);
    expect(authorizationRequest.searchParams.get('code_challenge_method')).toBe('S256');
    expect(claims).toMatchObject({
      OIDC_CLAIM_sub: approver.id,
      OIDC_CLAIM_email: approver.email,
      OIDC_CLAIM_iss: server.urls.sandboxApi,
      OIDC_CLAIM_nonce: authorizationRequest.searchParams.get('nonce'),
    });
    await expect(storedAccessToken(claims.access_token_hash!)).resolves.toMatchObject({
      live: true,
      scope: 'read_only openid',
      accountId: approver.id,
    });

    // Within OIDCRefreshAccessTokenBeforeExpiry: mod_auth_openidc refreshes before serving.
    const refreshed = await reload(page, apache);
    expect(refreshed.OIDC_CLAIM_sub).toBe(approver.id);
    expect(refreshed.access_token_hash).not.toBe(claims.access_token_hash);
    await expect(storedAccessToken(refreshed.access_token_hash!)).resolves.toMatchObject({
      live: true,
      scope: 'read_only openid',
      accountId: approver.id,
    });
    expect(apache.log()).not.toMatch(/could not be refreshed/);

    // Logout: mod_auth_openidc ends its own session and sends the browser to Almoner's
    // end_session_endpoint (from discovery) with its ID Token and the registered return
    // address; the hint is of this session, so Almoner signs out without asking and sends the
    // browser back. The next visit goes through Almoner's sign-in again.
    const endSession = page.waitForRequest((request) =>
      request.url().startsWith(`${server.urls.sandboxDashboard}/oauth/sandbox/end-session?`),
    );
    const back = page.waitForRequest((request) => request.url().startsWith(`${apache.origin}/signed-out`));
    await page.goto(`${apache.origin}/protected/redirect_uri?logout=${encodeURIComponent(`${apache.origin}/signed-out`)}`);
    const sent = new URL((await endSession).url());
    expect(sent.searchParams.get('id_token_hint')).toBeTruthy();
    expect(sent.searchParams.get('post_logout_redirect_uri')).toBe(`${apache.origin}/signed-out`);
    await back;
    const again = page.waitForRequest((request) => request.url().startsWith(`${server.urls.sandboxDashboard}/oauth/sandbox/authorize?`));
    await page.goto(`${apache.origin}/protected/claims`);
    await again;
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
  });
});

describe('mod_auth_openidc given an error response', () => {
  let apache: ApacheSite;
  beforeAll(async () => {
    apache = await apacheFor('openid read_only');
  });
  afterAll(async () => apache?.close());

  // Known quirk of mod_auth_openidc 2.4.12 (docs/integrations.md): an authorization error
  // response carrying RFC 9207 `iss` is taken for a third-party-initiated login (its `iss`
  // parameter), so the user sees that module's SSO error instead of access_denied.
  it('shows its third-party-login error, not access_denied, when the user denies (RFC 9207 iss on the error response)', async () => {
    const page = await context.newPage();
    const back = page.waitForRequest((request) => request.url().startsWith(`${apache.origin}/protected/redirect_uri?`));
    await page.goto(`${apache.origin}/protected/claims`);
    await signIn(page, approver);
    await page.getByRole('button', { name: chosenOrg.name, exact: true }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    const response = new URL((await back).url());
    expect(Object.fromEntries(response.searchParams)).toMatchObject({ error: 'access_denied', iss: server.urls.sandboxApi });
    await page.waitForURL(response.toString());
    await expect(page.locator('body').textContent()).resolves.toMatch(
      /SSO to this module without specifying a "target_link_uri" parameter is not possible/,
    );
  });
});

// Needs offline_access to be accepted (docs/oauth.md, scopes): mod_auth_openidc sends its whole OIDCScope
// again on refresh, so a refused offline_access ends its session (logout_on_error).
describe('mod_auth_openidc with offline_access requested', () => {
  let apache: ApacheSite;
  beforeAll(async () => {
    apache = await apacheFor('openid read_only offline_access');
  });
  afterAll(async () => apache?.close());

  it('refreshes with the scope it asked for, offline_access included, and keeps its session', async () => {
    const page = await context.newPage();
    const { claims } = await loginThroughApache(page, apache);
    expect(claims.OIDC_CLAIM_sub).toBe(approver.id);
    const refreshed = await reload(page, apache);
    expect(refreshed.access_token_hash).not.toBe(claims.access_token_hash);
    await expect(storedAccessToken(refreshed.access_token_hash!)).resolves.toMatchObject({
      live: true,
      accountId: approver.id,
      scope: expect.stringContaining('read_only'),
    });
    expect(apache.log()).not.toMatch(/could not be refreshed/);
  });
});
