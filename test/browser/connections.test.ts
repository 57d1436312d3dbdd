import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCookiesLocked, launchChromium, signIn, startAuthorization } from '../helpers/chromium.js';
import * as oauth from 'oauth4webapi';
import { fapiTokens, insecure, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { introspect, tokenRequest } from '../helpers/flow.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let browser: Browser;
let context: BrowserContext;
const REDIRECT = 'https://app.example.org/callback';

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(async () => context?.close());

type Client = { client_id: string; client_secret: string };
const connectionsUrl = () => `${server.urls.dashboard}/oauth/connections`;

/** A full authorization in `page` (signing in if asked), exchanged for tokens. */
async function authorizeAndExchange(page: Page, client: Client, user: { email: string; password: string }, scope = 'read_only') {
  const flow = await startAuthorization(page, server, {
    environment: 'production',
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope,
  });
  if (await page.getByLabel('Password').isVisible()) await signIn(page, user);
  await page.getByRole('button', { name: 'Approve' }).click();
  const code = (await flow.callback).searchParams.get('code')!;
  const tokens = await tokenRequest(server, 'production', client, { grant_type: 'authorization_code', code, code_verifier: flow.verifier });
  expect(tokens.status).toBe(200);
  return tokens.body as { access_token: string; refresh_token: string };
}

/** The list item of one application on the connections page. */
const item = (page: Page, name: string) => page.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
const listedApplications = (page: Page) => page.locator('.connection h2').allTextContents();

/** The Revoke button on an application's card: /oauth/connections revokes in one step (docs/oauth.md, "Connected applications"). */
async function revokeOnCard(page: Page, entry: ReturnType<typeof item>): Promise<void> {
  await Promise.all([page.waitForNavigation(), entry.getByRole('button', { name: 'Revoke', exact: true }).click()]);
}

/** The status of an FDX call with a DPoP-bound token (a refusal comes back as its status). */
function fdxStatus(fapi: FapiClient, accessToken: string): Promise<number> {
  const call = oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${server.urls.api}/fdx/v6/accounts`), new Headers(), null, {
    DPoP: fapi.dpop,
    ...insecure,
  });
  return call.then(
    (response) => response.status,
    (error: unknown) => (error instanceof oauth.WWWAuthenticateChallengeError ? error.status : Promise.reject(error)),
  );
}

describe('connected applications', () => {
  it('lists the authorization with its details, and Revoke kills every token at once', async () => {
    const staff = await createStaff(t.db);
    const client = await server.registerClient({ environment: 'production', name: 'Books Sync', redirectUris: [REDIRECT] });
    const page = await context.newPage();
    const tokens = await authorizeAndExchange(page, client, staff.users.member, 'read_only read_write');

    await page.goto(connectionsUrl());
    await expect(page.getByRole('heading', { name: 'Connected applications' }).isVisible()).resolves.toBe(true);
    const entry = item(page, 'Books Sync');
    await expect(entry.textContent()).resolves.toMatch(
      /Nonprofit.*Environment\s*Production.*Access for\s*You.*Permissions\s*View your nonprofit’s data\s*View and change your nonprofit’s data.*Granted.*UTC.*Last used.*UTC/s,
    );
    await expectCookiesLocked(context);

    await revokeOnCard(page, entry);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/Books Sync no longer has access/);
    await expect(listedApplications(page)).resolves.toEqual([]);

    // Every token of the authorization died with it.
    expect(
      (await tokenRequest(server, 'production', client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status,
    ).toBe(401);
    expect((await introspect(server, 'production', client, tokens.access_token)).body).toEqual({ active: false });
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'authorization.revoked')
      .where('client_id', '=', client.client_id)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ environment: 'production', actor_user_id: staff.users.member.id, organization_id: staff.orgId });
    expect(audit.details).toMatchObject({ via: 'connections_page', subject_type: 'user' });
  });

  it('shows a user only their own authorizations, and Owners and Admins their nonprofit’s organization-subject ones; nothing else can be revoked', async () => {
    const [a, b] = await Promise.all([createStaff(t.db), createStaff(t.db)]);
    const userApp = await server.registerClient({ environment: 'production', name: 'Member Tool', redirectUris: [REDIRECT] });
    const orgApp = await server.registerClient({
      environment: 'production',
      name: 'Org Ledger',
      redirectUris: [REDIRECT],
      scopes: ['read_only', 'read_write'],
      subjectType: 'organization',
    });
    const asUser = async (user: Staff['users']['owner'], client: Client) => {
      const ctx = await browser.newContext();
      await authorizeAndExchange(await ctx.newPage(), client, user);
      await ctx.close();
    };
    // One after another: four browsers at once, each hashing a password and setting up a second
    // factor, outran the callback wait on a loaded CI machine.
    await asUser(a.users.member, userApp);
    await asUser(a.users.admin, orgApp);
    await asUser(b.users.member, userApp);
    await asUser(b.users.admin, orgApp);
    const grants = await t.db
      .selectFrom('oauth_authorizations')
      .select(['grant_id', 'user_id'])
      .where('organization_id', 'in', [a.orgId, b.orgId])
      .execute();
    const grantOf = (userId: string) => grants.find((g) => g.user_id === userId)!.grant_id;

    // The Owner of A: A's organization-subject authorization (approved by A's Admin), not the
    // Member's own one, nothing of B.
    const page = await context.newPage();
    await page.goto(connectionsUrl());
    await signIn(page, a.users.owner);
    await expect(listedApplications(page)).resolves.toEqual(['Org Ledger']);
    await expect(item(page, 'Org Ledger').textContent()).resolves.toMatch(
      new RegExp(`The nonprofit\\s*approved by ${a.users.admin.email.replace('.', '\\.')}`),
    );

    // A's Member: their own authorization only.
    const memberContext = await browser.newContext();
    const memberPage = await memberContext.newPage();
    await memberPage.goto(connectionsUrl());
    await signIn(memberPage, a.users.member);
    await expect(listedApplications(memberPage)).resolves.toEqual(['Member Tool']);

    // A forged revoke with the Member's own valid CSRF token, for grants that are not theirs:
    // 404 as if they did not exist, and those authorizations stay live.
    const csrf = await memberPage.locator('input[name=csrf]').first().inputValue();
    for (const grant of [grantOf(a.users.admin.id), grantOf(b.users.member.id), grantOf(b.users.admin.id), 'no-such-grant']) {
      const response = await memberContext.request.post(`${connectionsUrl()}/revoke`, {
        form: { csrf, grant },
        headers: { origin: server.urls.dashboard, accept: 'text/html' },
        maxRedirects: 0,
      });
      expect(response.status()).toBe(404);
      expect(await response.text()).toContain('There is no such connected application.');
    }
    const stillLive = await t.db
      .selectFrom('oauth_authorizations')
      .select('grant_id')
      .where(
        'grant_id',
        'in',
        grants.map((g) => g.grant_id),
      )
      .where('revoked_at', 'is', null)
      .execute();
    expect(stillLive).toHaveLength(4);
    await memberContext.close();

    // The sandbox dashboard is another environment: its own session, none of these.
    const sandbox = await context.newPage();
    await sandbox.goto(`${server.urls.sandboxDashboard}/oauth/connections`);
    await signIn(sandbox, a.users.owner);
    await expect(sandbox.getByText('No application has access').isVisible()).resolves.toBe(true);
  });

  it('shows what a bank-data consent shares, and Revoke ends the consent with the tokens', async () => {
    const staff = await createStaff(t.db);
    const account = await createAccount(t.db, staff, 'production');
    const fapi = await registerFapiClient(server, { name: 'Bank Feed' });
    const consentRequest = {
      durationType: 'PERSISTENT',
      lookbackPeriod: 0,
      resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_BASIC', 'TRANSACTIONS'] }],
    };
    const tokens = await fapiTokens(server, fapi, {
      login: staff.users.admin,
      params: { authorization_details: JSON.stringify([{ type: 'fdx_v1.0', consentRequest }]) },
      consentFields: () => ({ [`account_${account.id}`]: 'on' }),
    });
    expect(await fdxStatus(fapi, tokens.access_token)).toBe(200);

    const page = await context.newPage();
    await page.goto(connectionsUrl());
    await signIn(page, staff.users.admin);
    const entry = item(page, 'Bank Feed');
    await expect(entry.textContent()).resolves.toMatch(
      new RegExp(
        `Bank data\\s*Active\\s*Consent to share bank account data.*Accounts shared\\s*Test\\s*••••${account.accountNumber.slice(-4)}.*Data shared\\s*Account names, types and masked numbers\\s*Transactions.*History\\s*None: only activity from the approval on.*Expires.*UTC`,
        's',
      ),
    );
    await revokeOnCard(page, entry);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(
      /Bank Feed no longer has access.*Its bank-data consent is revoked/,
    );
    await expect(listedApplications(page)).resolves.toEqual([]);
    expect(await fdxStatus(fapi, tokens.access_token)).toBe(401);
    const consent = await t.db.selectFrom('fdx_consents').selectAll().where('client_id', '=', fapi.client_id).executeTakeFirstOrThrow();
    expect(consent).toMatchObject({ status: 'REVOKED', revocation_reason: 'USER_ACTION', revocation_initiator: 'INDIVIDUAL' });
  });

  it("the Owner revokes bank-data access an Admin approved, on the organization's page, after confirming; the recipient's next call fails", async () => {
    const staff = await createStaff(t.db);
    await createAccount(t.db, staff, 'production');
    const fapi = await registerFapiClient(server, { name: 'Ledger Link' });
    // The admin approves (every account ticked), acting as themselves (a user-subject client).
    const tokens = await fapiTokens(server, fapi, { login: staff.users.admin });
    expect(await fdxStatus(fapi, tokens.access_token)).toBe(200);

    const page = await context.newPage();
    await page.goto(`${server.urls.dashboard}/orgs/${staff.ein}/connections`);
    await signIn(page, staff.users.owner);
    const entry = item(page, 'Ledger Link');
    await expect(entry.textContent()).resolves.toMatch(new RegExp(`Approved by\\s*${staff.users.admin.email}.*Bank data\\s*Active`, 's'));
    // Asked first: nothing ends until the Owner confirms.
    await Promise.all([page.waitForNavigation(), entry.getByRole('link', { name: 'Revoke…' }).click()]);
    await expect(page.getByText('Its consent to share bank account data is revoked too').isVisible()).resolves.toBe(true);
    expect(await fdxStatus(fapi, tokens.access_token)).toBe(200);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Revoke', exact: true }).click()]);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(
      /Ledger Link no longer has access.*Its bank-data consent is revoked/,
    );
    await expect(item(page, 'Ledger Link').count()).resolves.toBe(0);

    expect(await fdxStatus(fapi, tokens.access_token)).toBe(401);
    const consent = await t.db.selectFrom('fdx_consents').selectAll().where('client_id', '=', fapi.client_id).executeTakeFirstOrThrow();
    expect(consent).toMatchObject({
      status: 'REVOKED',
      revocation_reason: 'USER_ACTION',
      revocation_initiator: 'DATA_PROVIDER',
      user_id: staff.users.admin.id,
    });
    // Audited as the Owner, who revoked it.
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['actor_user_id', 'details'])
      .where('event', '=', 'fdx_consent.revoked')
      .where('client_id', '=', fapi.client_id)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: staff.users.owner.id, details: { consent_id: consent.id, via: 'organization_page' } });
  });

  it('signs in on its own, shares the session with the authorization flow, and Sign out ends it', async () => {
    const staff = await createStaff(t.db);
    const client = await server.registerClient({ environment: 'production', name: 'Shared Session', redirectUris: [REDIRECT] });
    const page = await context.newPage();
    await page.goto(connectionsUrl());
    await expect(page.getByRole('heading', { name: 'Sign in to manage connected applications' }).isVisible()).resolves.toBe(true);
    await signIn(page, staff.users.owner);
    await expect(page.getByText(`Signed in as ${staff.users.owner.email}`).isVisible()).resolves.toBe(true);
    await expectCookiesLocked(context);

    // Signed in here means signed in for the flow: straight to the consent screen.
    const flow = await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
    });
    await expect(page.getByRole('button', { name: 'Approve' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await flow.callback).searchParams.get('code')).toBeTruthy();

    await page.goto(connectionsUrl());
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('You are signed out.');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('alm_production_session');
    expect(
      await t.db
        .selectFrom('audit_events')
        .select('event')
        .where('event', '=', 'logout')
        .where('actor_user_id', '=', staff.users.owner.id)
        .execute(),
    ).toHaveLength(1);

    // Signed out: the next authorization asks to sign in again (tokens already issued live on).
    await startAuthorization(page, server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
    });
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
  });
});
