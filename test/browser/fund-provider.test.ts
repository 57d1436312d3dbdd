import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addUser } from '../../src/accounts/service.js';
import { addMember } from '../../src/accounts/memberships.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { formatEin } from '../../src/accounts/ein.js';
import { launchChromium, passSecondFactor, signIn, startAuthorization, type BrowserAuthorization } from '../helpers/chromium.js';
import { discover } from '../helpers/flow.js';
import { apiRequest } from '../helpers/gateway.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A fund provider's staff connect an application in a real browser, as a nonprofit's do: the
 * organization choice lists both kinds with their kind, the consent screen names the fund
 * provider, and the code the browser brings back is redeemed by a real OAuth client library
 * (oauth4webapi: discovery, state, PKCE, id_token with its nonce) for a token that the
 * donor-advised-fund operations accept.
 */

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff: nonprofit,
  clients: { app },
} = useOAuthServer({
  clients: {
    app: { environment: 'production', name: 'Grant Desk', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid'] },
  },
});
let browser: Browser;
let context: BrowserContext;
let fund: Staff;
let fundName: string;

beforeAll(async () => {
  browser = await launchChromium();
  fund = await createStaff(t.db, { kind: 'fund_provider' });
  fundName = (await t.db.selectFrom('organizations').select('name').where('id', '=', fund.orgId).executeTakeFirstOrThrow()).name;
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(async () => context?.close());

const nameOf = async (orgId: string) =>
  (await t.db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow()).name;

/** The code flow's back-channel half through oauth4webapi: the callback checked, the code redeemed, the id_token verified. */
async function redeem(flow: BrowserAuthorization) {
  const as = await discover(server, 'production');
  const client: oauth.Client = { client_id: app.client_id };
  const params = oauth.validateAuthResponse(as, client, await flow.callback, flow.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(app.client_secret),
    params,
    REDIRECT,
    flow.verifier,
    { [oauth.allowInsecureRequests]: true },
  );
  return oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: flow.nonce, requireIdToken: true });
}

const factsOf = (page: Page) => page.locator('.facts').textContent();

describe("a fund provider's staff in the browser", () => {
  it('a fund-provider-only member sees a consent naming the fund provider, approves, and the token reads and writes the DAF operations', async () => {
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only read_write',
    });
    await signIn(page, fund.users.member);

    // One organization: no choice, straight to the consent screen, which names it and its kind.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Grant Desk wants access to ${fundName}`);
    await expect(factsOf(page)).resolves.toMatch(new RegExp(`Fund provider\\s*${fundName}\\s*EIN ${formatEin(fund.ein)}.*Member`, 's'));
    await expect(page.locator('ul.perms li .perm-title').allTextContents()).resolves.toEqual([
      'View your fund provider’s data',
      'View and change your fund provider’s data',
      'Know who you are',
    ]);
    await expect(page.getByText(/not a member of any/).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Approve' }).click();

    const tokens = await redeem(flow);
    expect(tokens.scope).toBe('read_only read_write openid');
    expect(oauth.getValidatedIdTokenClaims(tokens)?.sub).toBe(fund.users.member.id);
    const created = await apiRequest(server, 'production', 'POST', '/v1/donor_accounts', {
      bearer: tokens.access_token,
      json: { donor: { email: 'browser-donor@example.org' } },
    });
    expect(created.status).toBe(201);
    const listed = await apiRequest(server, 'production', 'GET', '/v1/donor_accounts', { bearer: tokens.access_token });
    expect((listed.body.results as { id: string }[]).map((r) => r.id)).toContain(created.body.id);

    // The connections page shows the authorization as the fund provider's.
    await page.goto(`${server.urls.dashboard}/oauth/connections`);
    const entry = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Grant Desk', exact: true }) });
    await expect(entry.textContent()).resolves.toMatch(
      new RegExp(
        `Fund provider\\s*${fundName}.*Permissions\\s*View your fund provider’s data\\s*View and change your fund provider’s data`,
        's',
      ),
    );
    await expect(page.locator('p.lead').textContent()).resolves.toMatch(/act for your organizations/);
  });

  it('a member of a nonprofit and a fund provider chooses among both, each with its kind, and the consent names the chosen fund provider', async () => {
    const both = nonprofit.users.read_only;
    await addMember(t.db, { org: fund.ein, email: both.email, role: 'member' });
    const nonprofitName = await nameOf(nonprofit.orgId);
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only read_write',
    });
    await signIn(page, both);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Choose an organization');
    const choices = page.locator('ul.choices button');
    await expect(choices.count()).resolves.toBe(2);
    for (const [name, kind, ein, role] of [
      [nonprofitName, 'Nonprofit', nonprofit.ein, 'Read-only'],
      [fundName, 'Fund provider', fund.ein, 'Member'],
    ] as const) {
      const button = page.getByRole('button', { name, exact: true });
      await expect(button.isVisible()).resolves.toBe(true);
      await expect(button.locator('.choice-meta').textContent()).resolves.toBe(`${kind} · EIN ${formatEin(ein)} · ${role}`);
      // Screen readers hear the kind too (the visible line is aria-hidden).
      const described = await button.getAttribute('aria-describedby');
      await expect(page.locator(`#${described}`).textContent()).resolves.toBe(`${kind}, EIN ${formatEin(ein)}, your role: ${role}`);
    }
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: fundName, exact: true }).click()]);
    // Write access needs a second factor: set up on the spot, then the consent for the fund provider chosen.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Set up a second factor');
    await passSecondFactor(page, both.email);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Grant Desk wants access to ${fundName}`);
    await expect(factsOf(page)).resolves.toMatch(new RegExp(`Fund provider\\s*${fundName}.*Choose another`, 's'));
    // The role in the fund provider counts (Member: read_write), not the one in the nonprofit (Read-only).
    await expect(page.locator('ul.withheld').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Approve' }).click();

    const tokens = await redeem(flow);
    expect(tokens.scope).toBe('read_only read_write openid');
    const authorization = await t.db
      .selectFrom('oauth_authorizations')
      .select(['organization_id', 'scopes'])
      .where('user_id', '=', both.id)
      .where('client_id', '=', app.client_id)
      .executeTakeFirstOrThrow();
    expect(authorization.organization_id).toBe(fund.orgId);
    const res = await apiRequest(server, 'production', 'POST', '/v1/donor_accounts', {
      bearer: tokens.access_token,
      json: { donor: { email: 'chosen@example.org' } },
    });
    expect(res.status).toBe(201);
  });

  it('tells a user of no organization that there is none, naming both kinds, and offers only Deny', async () => {
    const loner = { email: `loner-${fund.ein}@example.org`, password: 'loner-password' };
    await addUser(t.db, loner, MIN_PASSWORD_PARAMS);
    const page = await context.newPage();
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
    });
    await signIn(page, loner);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      `${loner.email} is not a member of any nonprofit or fund provider, so there is nothing Grant Desk could access. You can only deny this request; an Owner or Admin of your organization can add you.`,
    );
    await expect(page.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Deny' }).click();
    expect((await flow.callback).searchParams.get('error')).toBe('access_denied');
  });
});
