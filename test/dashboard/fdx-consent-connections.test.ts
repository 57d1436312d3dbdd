import { sql } from 'kysely';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireDueConsents, findConsentOfRecipient } from '../../src/authorizations/fdx-consents.js';
import { shownDate } from '../../src/dashboard/dates.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { obtainTokens } from '../helpers/flow.js';
import { approve, fapiTokens, insecure, push, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { recipientToken } from '../helpers/fdx-consent.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Bank-data (FDX) consents on the connected applications pages, the user's and the
 * organization's: what each shares, and Revoke ending the consent with the authorization, so
 * the recipient reads it REVOKED and its token is refused on the next call.
 */
const { testDatabase: t, server, staff } = useOAuthServer();

/** User-subject: acts as the admin who approves it. */
let personal: FapiClient;
/** Organization-subject: belongs to the nonprofit, so any Owner or Admin may revoke it. */
let treasury: FapiClient;
let operating: { id: string; accountNumber: string };
let petty: { id: string; accountNumber: string };
let doomed: { id: string; accountNumber: string };

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const last4 = (account: { accountNumber: string }) => `••••${account.accountNumber.slice(-4)}`;

const consentRequest = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify([
    {
      type: 'fdx_v1.0',
      consentRequest: {
        durationType: 'TIME_BOUND',
        durationPeriod: 90,
        lookbackPeriod: 30,
        resources: [
          { resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] },
          { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
        ],
        ...overrides,
      },
    },
  ]);

/** A consent through the real flow: pushed, approved by the admin with `accounts` ticked, exchanged. */
async function consentOf(fapi: FapiClient, accounts: { id: string }[], overrides: Record<string, unknown> = {}) {
  const tokens = await fapiTokens(server, fapi, {
    login: staff.users.admin,
    params: { authorization_details: consentRequest(overrides) },
    consentFields: () => Object.fromEntries(accounts.map((a) => [`account_${a.id}`, 'on'])),
  });
  const consentId = (tokens.authorization_details as { type: string; consentId: string }[])[0]!.consentId;
  const grantId = (await t.db.selectFrom('fdx_consents').select('grant_id').where('id', '=', consentId).executeTakeFirstOrThrow()).grant_id;
  return { accessToken: tokens.access_token, consentId, grantId };
}

/** An FDX call with the token and its DPoP proof; a refusal (oauth4webapi throws on a challenge) comes back as its status and challenges. */
async function dpopGet(
  fapi: FapiClient,
  token: string,
  path: string,
): Promise<{ status: number; body: Record<string, unknown>; challenges?: oauth.WWWAuthenticateChallenge[] }> {
  try {
    const response = await oauth.protectedResourceRequest(token, 'GET', new URL(`${server.urls.api}${path}`), new Headers(), null, {
      DPoP: fapi.dpop,
      ...insecure,
    });
    return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  } catch (error) {
    if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
    return { status: error.status, body: {}, challenges: error.cause };
  }
}

/** The list item of one authorization on a connections page, found by the link to its revocation. */
function entryOf(html: string, grantId: string): string {
  const entry = html
    .split('<li class="connection">')
    .find((chunk) => chunk.includes(`value="${grantId}"`) || chunk.includes(`/${grantId}/revoke"`));
  if (!entry) throw new Error(`no connection ${grantId} on the page`);
  return entry;
}

/** The audit rows of one event whose details name `value` as `key`. */
const auditOf = async (event: string, key: string, value: string) =>
  (await t.db.selectFrom('audit_events').selectAll().where('event', '=', event).orderBy('id').execute()).filter(
    (row) => row.details[key] === value,
  );

beforeAll(async () => {
  personal = await registerFapiClient(server, { name: 'Budget Aggregator' });
  treasury = await registerFapiClient(server, { name: 'Treasury Aggregator', subjectType: 'organization' });
  [operating, petty, doomed] = [
    await createAccount(t.db, staff, 'production'),
    await createAccount(t.db, staff, 'production'),
    await createAccount(t.db, staff, 'production'),
  ];
  await t.db.updateTable('deposit_accounts').set({ nickname: 'Operating' }).where('id', '=', operating.id).execute();
  // Whatever the nickname says is shown as text, never as markup.
  await t.db.updateTable('deposit_accounts').set({ nickname: 'Petty <cash> & "float"' }).where('id', '=', petty.id).execute();
});

describe('what a bank-data consent shares, on both pages', () => {
  let consent: Awaited<ReturnType<typeof consentOf>>;

  beforeAll(async () => {
    consent = await consentOf(personal, [operating, petty, doomed]);
    // An account removed after the approval: the consent still names it.
    await t.db.deleteFrom('deposit_accounts').where('id', '=', doomed.id).execute();
  });

  const expectBankData = async (entry: string) => {
    const stored = (await findConsentOfRecipient(t.db, 'production', personal.client_id, consent.consentId))!;
    expect(entry).toContain('Budget Aggregator');
    expect(entry).toContain('<dt>Bank data</dt><dd><span class="tag ok">Active</span>');
    expect(entry).toContain(`<li>Operating <span class="muted">${last4(operating)}</span></li>`);
    expect(entry).toContain(`<li>Petty &lt;cash&gt; &amp; &quot;float&quot; <span class="muted">${last4(petty)}</span></li>`);
    expect(entry).not.toContain('<cash>');
    expect(entry).toContain('<li><span class="muted">An account since deleted</span></li>');
    expect(entry).not.toContain(last4(doomed));
    expect(entry).toContain(
      '<li>Account details and balances</li><li>Transactions</li><li>The organization&#39;s name, address and contact details</li>',
    );
    expect(entry).toContain('<dt>History</dt><dd>30 days of past activity</dd>');
    const expires = shownDate(stored.expiresAt);
    expect(entry).toContain(`<dt>Expires</dt><dd><time datetime="${expires.iso}">${expires.text}</time></dd>`);
    // TIME_BOUND for 90 days from the approval.
    expect(Math.abs(stored.expiresAt.getTime() - stored.createdAt.getTime() - 90 * 86_400_000)).toBeLessThan(1000);
  };

  it("the approver's Connected applications page", async () => {
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const page = await session.get('/oauth/connections');
    expect(page.status).toBe(200);
    await expectBankData(entryOf(page.html, consent.grantId));
  });

  it("the organization's Connected applications page, to an Owner (access that acts as a member)", async () => {
    const session = await dashboardSession(server, 'production', staff.users.owner);
    const page = await session.get(`/orgs/${staff.ein}/connections`);
    expect(page.status).toBe(200);
    const memberSection = page.html.slice(page.html.indexOf('id="member-access"'));
    const entry = memberSection.split('<li class="connection">').find((chunk) => chunk.includes('Budget Aggregator'))!;
    await expectBankData(entry);
  });

  it('an authorization without a consent says nothing of bank data', async () => {
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const client = await server.registerClient({
      environment: 'production',
      name: 'Plain Reports',
      redirectUris: ['https://app.example.org/callback'],
      scopes: ['read_only'],
    });
    await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only',
      login: staff.users.admin,
    });
    const page = await session.get('/oauth/connections');
    const entry = page.html.split('<li class="connection">').find((chunk) => chunk.includes('Plain Reports'))!;
    expect(entry).toBeTruthy();
    expect(entry).not.toContain('Bank data');
  });
});

describe('a consent past its expiry', () => {
  it('is shown Expired; revoking its connection ends the authorization and leaves the consent EXPIRED', async () => {
    const consent = await consentOf(personal, [operating]);
    await sql`update fdx_consents set created_at = now() - interval '2 days', expires_at = now() - interval '1 minute' where id = ${consent.consentId}`.execute(
      t.db,
    );
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const page = await session.get('/oauth/connections');
    const entry = entryOf(page.html, consent.grantId);
    expect(entry).toContain('<span class="tag warn">Expired</span>');
    expect(entry).toContain('<dt>Expired</dt>');

    const done = await session.browser.request(`${session.origin}/oauth/connections/revoke`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), grant: consent.grantId },
    });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Budget Aggregator no longer has access');
    expect(done.html).not.toContain('bank-data consent is revoked');
    const stored = (await findConsentOfRecipient(t.db, 'production', personal.client_id, consent.consentId))!;
    expect(stored.status).toBe('EXPIRED');
    expect(stored.revocationReason).toBeNull();
    expect(await auditOf('fdx_consent.revoked', 'consent_id', consent.consentId)).toEqual([]);
    expect(await auditOf('authorization.revoked', 'grant_id', consent.grantId)).toHaveLength(1);
  });
});

describe('Revoke ends the bank-data consent with the authorization', () => {
  /** The recipient reads the revoked consent through the Consent API, with its own client-credentials token. */
  const consentApi = async (fapi: FapiClient, consentId: string) => {
    const own = await recipientToken(fapi);
    return {
      grant: await dpopGet(fapi, own, `/fdx/v6/consents/${consentId}`),
      revocation: await dpopGet(fapi, own, `/fdx/v6/consents/${consentId}/revocation`),
    };
  };

  it("from the approver's page: INDIVIDUAL, USER_ACTION; the token is 401 on its next call", async () => {
    const consent = await consentOf(personal, [operating]);
    // Another recipient's consent (a recipient holds one per organization: a newer one replaces its earlier).
    const otherRecipient = await registerFapiClient(server, { name: 'Budget Reader' });
    const reader = await consentOf(otherRecipient, [petty]);
    expect((await dpopGet(personal, consent.accessToken, '/fdx/v6/accounts')).status).toBe(200);

    const session = await dashboardSession(server, 'production', staff.users.admin);
    const page = await session.get('/oauth/connections');
    const done = await session.browser.request(`${session.origin}/oauth/connections/revoke`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), grant: consent.grantId },
    });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Budget Aggregator no longer has access');
    expect(done.html).toContain('Its bank-data consent is revoked');
    expect(done.html).not.toContain(`value="${consent.grantId}"`);

    const refused = await dpopGet(personal, consent.accessToken, '/fdx/v6/accounts');
    expect(refused.status).toBe(401);
    expect(refused.challenges?.[0]?.parameters.error).toBe('invalid_token');
    const stored = (await findConsentOfRecipient(t.db, 'production', personal.client_id, consent.consentId))!;
    expect(stored).toMatchObject({ status: 'REVOKED', revocationReason: 'USER_ACTION', revocationInitiator: 'INDIVIDUAL' });
    const api = await consentApi(personal, consent.consentId);
    expect(api.grant.status).toBe(200);
    expect(api.grant.body.status).toBe('REVOKED');
    expect(api.revocation.body.revocations).toEqual([
      expect.objectContaining({ status: 'REVOKED', reason: 'USER_ACTION', initiator: 'INDIVIDUAL' }),
    ]);
    // The other consent was not touched.
    expect((await dpopGet(otherRecipient, reader.accessToken, '/fdx/v6/accounts')).status).toBe(200);

    const [authorizationRow] = await auditOf('authorization.revoked', 'grant_id', consent.grantId);
    expect(authorizationRow).toMatchObject({
      actor_user_id: staff.users.admin.id,
      organization_id: staff.orgId,
      client_id: personal.client_id,
      details: { via: 'connections_page', fdx_consent_id: consent.consentId },
    });
    const consentRows = await auditOf('fdx_consent.revoked', 'consent_id', consent.consentId);
    expect(consentRows).toHaveLength(1);
    expect(consentRows[0]).toMatchObject({
      actor_user_id: staff.users.admin.id,
      organization_id: staff.orgId,
      details: { grant_id: consent.grantId, reason: 'USER_ACTION', initiator: 'INDIVIDUAL', via: 'connections_page' },
    });
  });

  it("from the organization's page, by an Owner who did not approve it: DATA_PROVIDER, USER_ACTION", async () => {
    const consent = await consentOf(treasury, [operating, petty]);
    expect((await dpopGet(treasury, consent.accessToken, `/fdx/v6/accounts/${petty.id}`)).status).toBe(200);

    const session = await dashboardSession(server, 'production', staff.users.owner);
    const page = await session.get(`/orgs/${staff.ein}/connections`);
    const entry = entryOf(page.html, consent.grantId);
    expect(entry).toContain('Treasury Aggregator');
    expect(entry).toContain('<span class="tag ok">Active</span>');
    const done = await session.browser.request(`${session.origin}/orgs/${staff.ein}/connections/revoke`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), grant: consent.grantId },
    });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Treasury Aggregator no longer has access');
    expect(done.html).toContain('Its bank-data consent is revoked');

    const refused = await dpopGet(treasury, consent.accessToken, `/fdx/v6/accounts/${petty.id}`);
    expect(refused.status).toBe(401);
    expect(refused.challenges?.[0]?.parameters.error).toBe('invalid_token');
    const stored = (await findConsentOfRecipient(t.db, 'production', treasury.client_id, consent.consentId))!;
    expect(stored).toMatchObject({ status: 'REVOKED', revocationReason: 'USER_ACTION', revocationInitiator: 'DATA_PROVIDER' });
    const api = await consentApi(treasury, consent.consentId);
    expect(api.grant.body.status).toBe('REVOKED');
    expect(api.revocation.body.revocations).toEqual([expect.objectContaining({ reason: 'USER_ACTION', initiator: 'DATA_PROVIDER' })]);

    const [authorizationRow] = await auditOf('authorization.revoked', 'grant_id', consent.grantId);
    expect(authorizationRow).toMatchObject({
      actor_user_id: staff.users.owner.id,
      details: { via: 'organization_page', subject_type: 'organization', fdx_consent_id: consent.consentId },
    });
    expect(await auditOf('fdx_consent.revoked', 'consent_id', consent.consentId)).toEqual([
      expect.objectContaining({
        actor_user_id: staff.users.owner.id,
        organization_id: staff.orgId,
        client_id: treasury.client_id,
        details: expect.objectContaining({ initiator: 'DATA_PROVIDER', reason: 'USER_ACTION', via: 'organization_page' }),
      }),
    ]);

    // The recipient cannot revoke it again: the Consent API sees it revoked (409).
    const again = await oauth.protectedResourceRequest(
      await recipientToken(treasury),
      'PUT',
      new URL(`${server.urls.api}/fdx/v6/consents/${consent.consentId}/revocation`),
      new Headers({ 'content-type': 'application/json' }),
      JSON.stringify({ reason: 'USER_ACTION', initiator: 'DATA_RECIPIENT' }),
      { DPoP: treasury.dpop, ...insecure },
    );
    expect(again.status).toBe(409);
  });
});

describe("a consent's life on the connected applications pages", () => {
  /** Pushed and approved by the admin, its code not exchanged. */
  async function approvedOnly(fapi: FapiClient, accounts: { id: string }[]) {
    const { requestUri } = await push(fapi, { authorization_details: consentRequest() });
    await approve(server, fapi, requestUri, {
      login: staff.users.admin,
      consentFields: () => Object.fromEntries(accounts.map((a) => [`account_${a.id}`, 'on'])),
    });
    return t.db
      .selectFrom('fdx_consents')
      .selectAll()
      .where('client_id', '=', fapi.client_id)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
  }

  it('approved but never collected: shown as such, then it lapses and its card goes', async () => {
    const fapi = await registerFapiClient(server, { name: 'Slow Aggregator' });
    const pending = await approvedOnly(fapi, [operating]);
    expect(pending.status).toBe('PENDING');
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const entry = entryOf((await session.get('/oauth/connections')).html, pending.grant_id);
    expect(entry).toContain('<span class="tag warn">Not yet collected</span>');
    expect(entry).toContain('<dt>Lapses unless collected by</dt>');
    // Unseen by its recipient until it exchanges the code.
    expect((await dpopGet(fapi, await recipientToken(fapi), `/fdx/v6/consents/${pending.id}`)).status).toBe(404);
    // The code is long gone and the window has passed: the sweep lets it lapse with its authorization.
    await sql`update fdx_consents set created_at = now() - interval '11 minutes', expires_at = now() - interval '1 second' where id = ${pending.id}`.execute(
      t.db,
    );
    await expireDueConsents(t.db);
    expect((await t.db.selectFrom('fdx_consents').select('status').where('id', '=', pending.id).executeTakeFirstOrThrow()).status).toBe(
      'EXPIRED',
    );
    expect((await session.get('/oauth/connections')).html).not.toContain('Slow Aggregator');
  });

  it('a re-authorization by the same recipient replaces its consent: one card, the earlier consent REVOKED by the data provider', async () => {
    const fapi = await registerFapiClient(server, { name: 'Renewing Aggregator' });
    const first = await consentOf(fapi, [operating]);
    // Approved again, not yet collected: the first consent still works, both are listed.
    const renewal = await approvedOnly(fapi, [operating, petty]);
    expect((await dpopGet(fapi, first.accessToken, '/fdx/v6/accounts')).status).toBe(200);
    const session = await dashboardSession(server, 'production', staff.users.admin);
    const cards = async () =>
      (await session.get('/oauth/connections')).html.split('<li class="connection">').filter((c) => c.includes('Renewing Aggregator'));
    expect(await cards()).toHaveLength(2);
    // Collected: the renewal replaces the first.
    const second = await consentOf(fapi, [petty]);
    expect(await cards()).toHaveLength(1);
    entryOf((await session.get('/oauth/connections')).html, second.grantId);
    expect((await dpopGet(fapi, first.accessToken, '/fdx/v6/accounts')).status).toBe(401);
    expect((await dpopGet(fapi, second.accessToken, '/fdx/v6/accounts')).status).toBe(200);
    const api = await dpopGet(fapi, await recipientToken(fapi), `/fdx/v6/consents/${first.consentId}/revocation`);
    expect(api.body.revocations).toEqual([expect.objectContaining({ reason: 'BUSINESS_RULE', initiator: 'DATA_PROVIDER' })]);
    expect(await auditOf('fdx_consent.revoked', 'consent_id', first.consentId)).toEqual([
      expect.objectContaining({
        actor_user_id: staff.users.admin.id,
        details: expect.objectContaining({ superseded_by: second.consentId }),
      }),
    ]);
    // The renewal approved and never collected is replaced too: the last consent collected is the one.
    expect(
      await t.db.selectFrom('fdx_consents').select(['status', 'revocation_reason']).where('id', '=', renewal.id).executeTakeFirstOrThrow(),
    ).toEqual({ status: 'REVOKED', revocation_reason: 'BUSINESS_RULE' });
  });
});
