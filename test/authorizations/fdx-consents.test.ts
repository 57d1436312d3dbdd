import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/audit-log.js';
import { insertAuthorization, revokeAuthorizationIn, revokeUserAuthorizationsIn } from '../../src/authorizations/authorizations.js';
import { inTransaction } from '../../src/db/executor.js';
import { parseFdxAuthorizationDetails } from '../../src/authorizations/fdx-consent-request.js';
import { consentExpiry } from '../../src/authorizations/fdx-consent.js';
import {
  activateFdxConsentIn,
  expireDueConsents,
  FdxConsentChoiceError,
  findConsentOfGrant,
  findConsentOfRecipient,
  recordFdxConsent,
  revokeFdxConsent,
} from '../../src/authorizations/fdx-consents.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createAccount } from '../helpers/fdx.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';

/** The consent record against real Postgres: what is stored, how it expires, how it is revoked. */
let t: TestDatabase;
let staff: Staff;
let other: Staff;
let accounts: string[];
let theirAccount: string;

beforeAll(async () => {
  t = await createTestDatabase();
  [staff, other] = [await createStaff(t.db), await createStaff(t.db)];
  accounts = [(await createAccount(t.db, staff, 'production')).id, (await createAccount(t.db, staff, 'production')).id];
  theirAccount = (await createAccount(t.db, other, 'production')).id;
});
afterAll(async () => t?.drop());

const request = (consentRequest: Record<string, unknown> = {}) =>
  parseFdxAuthorizationDetails([
    {
      type: 'fdx_v1.0',
      consentRequest: {
        durationType: 'TIME_BOUND',
        durationPeriod: 30,
        resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] }],
        ...consentRequest,
      },
    },
  ]);

/** An authorization of `clientId` (the consent's grant must exist: a foreign key). */
async function authorization(clientId = 'client-a'): Promise<string> {
  const grantId = crypto.randomBytes(12).toString('base64url');
  await insertAuthorization(t.db, {
    grantId,
    environment: 'production',
    clientId,
    subjectType: 'user',
    userId: staff.users.admin.id,
    organizationId: staff.orgId,
    scopes: ['read_only', 'read:bank_accounts'],
  });
  return grantId;
}

/** A consent as the consent screen records it: PENDING until its code is exchanged. */
async function pendingConsent(consentRequest: Record<string, unknown> = {}, clientId = 'client-a', accountIds: string[] = [accounts[0]!]) {
  const grantId = await authorization(clientId);
  return recordFdxConsent(t.db, {
    environment: 'production',
    organizationId: staff.orgId,
    clientId,
    grantId,
    userId: staff.users.admin.id,
    request: request(consentRequest),
    accountIds,
  });
}

/**
 * A consent whose code was exchanged: ACTIVE until its end. Made so here, not through
 * activateFdxConsentIn, which would also end the client's earlier consents (tested below).
 */
async function consent(consentRequest: Record<string, unknown> = {}, clientId = 'client-a', accountIds: string[] = [accounts[0]!]) {
  const c = await pendingConsent(consentRequest, clientId, accountIds);
  const expiresAt = consentExpiry({ durationType: c.durationType, durationPeriod: c.durationPeriod ?? undefined }, c.createdAt);
  await t.db.updateTable('fdx_consents').set({ status: 'ACTIVE', expires_at: expiresAt }).where('id', '=', c.id).execute();
  return (await findConsentOfGrant(t.db, 'production', c.grantId))!;
}

const days = (n: number) => n * 86_400_000;
/** Moves a consent two days back, so that it expired a second ago (created_at is not updatable through the table types). */
const backdate = (id: string) =>
  sql`update fdx_consents set created_at = now() - interval '2 days', expires_at = now() - interval '1 second' where id = ${id}`.execute(
    t.db,
  );

describe('recordFdxConsent', () => {
  it('stores one ACCOUNT resource per chosen account and the organization as the CUSTOMER resource, with an unguessable id', async () => {
    const c = await consent(
      {
        lookbackPeriod: 90,
        resources: [
          { resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS'] },
          { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
        ],
      },
      'client-a',
      [...accounts, accounts[0]!],
    );
    expect(c.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(c).toMatchObject({
      status: 'ACTIVE',
      durationType: 'TIME_BOUND',
      durationPeriod: 30,
      lookbackPeriod: 90,
      revokedAt: null,
      userId: staff.users.admin.id,
    });
    expect(c.resources).toEqual([
      { resourceType: 'ACCOUNT', resourceId: accounts[0], dataClusters: ['TRANSACTIONS'] },
      { resourceType: 'ACCOUNT', resourceId: accounts[1], dataClusters: ['TRANSACTIONS'] },
      { resourceType: 'CUSTOMER', resourceId: staff.orgId, dataClusters: ['CUSTOMER_CONTACT'] },
    ]);
    expect(await findConsentOfGrant(t.db, 'production', c.grantId)).toEqual(c);
    expect(await findConsentOfGrant(t.db, 'sandbox', c.grantId)).toBeUndefined();
  });

  it('expires ONE_TIME after an hour, TIME_BOUND after its period, PERSISTENT after at most a year', async () => {
    const span = (c: { createdAt: Date; expiresAt: Date }) => c.expiresAt.getTime() - c.createdAt.getTime();
    expect(span(await consent({ durationType: 'ONE_TIME', durationPeriod: undefined }))).toBe(3_600_000);
    expect(span(await consent({ durationType: 'TIME_BOUND', durationPeriod: 30 }))).toBe(days(30));
    expect(span(await consent({ durationType: 'PERSISTENT', durationPeriod: undefined }))).toBe(days(365));
    expect(span(await consent({ durationType: 'PERSISTENT', durationPeriod: 200 }))).toBe(days(200));
  });

  it('refuses a choice that does not fit: no account for an ACCOUNT request, accounts for a CUSTOMER-only one, or not the organization’s', async () => {
    await expect(consent({}, 'client-a', [])).rejects.toThrow(FdxConsentChoiceError);
    await expect(consent({ resources: [{ resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] }] })).rejects.toThrow(
      /asks for no accounts/,
    );
    await expect(consent({}, 'client-a', [theirAccount])).rejects.toThrow(/not one of the organization's accounts/);
    await expect(consent({}, 'client-a', ['not-a-uuid'])).rejects.toThrow(FdxConsentChoiceError);
    const customerOnly = await consent({ resources: [{ resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] }] }, 'client-a', []);
    expect(customerOnly.resources).toEqual([{ resourceType: 'CUSTOMER', resourceId: staff.orgId, dataClusters: ['CUSTOMER_CONTACT'] }]);
  });

  it('keeps one consent per authorization', async () => {
    const c = await consent();
    const again = recordFdxConsent(t.db, {
      environment: 'production',
      organizationId: staff.orgId,
      clientId: 'client-a',
      grantId: c.grantId,
      userId: staff.users.admin.id,
      request: request(),
      accountIds: accounts,
    });
    await expect(again).rejects.toMatchObject({ code: '23505' });
  });
});

describe('reading a consent', () => {
  it('shows it to its recipient only: another client or an unknown id are the same undefined', async () => {
    const c = await consent();
    expect((await findConsentOfRecipient(t.db, 'production', 'client-a', c.id))?.id).toBe(c.id);
    expect(await findConsentOfRecipient(t.db, 'production', 'client-b', c.id)).toBeUndefined();
    expect(await findConsentOfRecipient(t.db, 'production', 'client-a', 'x'.repeat(22))).toBeUndefined();
    expect(await findConsentOfRecipient(t.db, 'sandbox', 'client-a', c.id)).toBeUndefined();
  });

  it('reports EXPIRED once expires_at has passed, before any sweep; the sweep marks it and ends the authorization', async () => {
    const c = await consent();
    const live = await consent();
    await backdate(c.id);
    expect((await findConsentOfGrant(t.db, 'production', c.grantId))?.status).toBe('EXPIRED');
    expect((await t.db.selectFrom('fdx_consents').select('status').where('id', '=', c.id).executeTakeFirstOrThrow()).status).toBe('ACTIVE');
    expect(await expireDueConsents(t.db)).toBeGreaterThanOrEqual(1);
    expect(
      await t.db.selectFrom('fdx_consents').select(['status', 'updated_at', 'expires_at']).where('id', '=', c.id).executeTakeFirstOrThrow(),
    ).toMatchObject({ status: 'EXPIRED' });
    const authorization = await t.db
      .selectFrom('oauth_authorizations')
      .select(['revoked_at', 'revoked_reason'])
      .where('grant_id', '=', c.grantId)
      .executeTakeFirstOrThrow();
    expect(authorization).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: 'fdx_consent_expired' });
    expect((await findConsentOfGrant(t.db, 'production', live.grantId))?.status).toBe('ACTIVE');
    expect(await expireDueConsents(t.db)).toBe(0);
  });
});

describe('an authorization ended another way', () => {
  it('ends its consent too (the approver left the organization): REVOKED by the data provider under its business rules', async () => {
    const c = await consent();
    const revoked = await inTransaction(t.db, (trx) =>
      revokeUserAuthorizationsIn(trx, { userId: staff.users.admin.id, organizationId: staff.orgId, reason: 'member_removed' }),
    );
    expect(revoked.map((r) => r.grantId)).toContain(c.grantId);
    expect(await findConsentOfGrant(t.db, 'production', c.grantId)).toMatchObject({
      status: 'REVOKED',
      revocationReason: 'BUSINESS_RULE',
      revocationInitiator: 'DATA_PROVIDER',
    });
  });

  it('leaves an expired consent EXPIRED', async () => {
    const c = await consent();
    await backdate(c.id);
    await inTransaction(t.db, (trx) => revokeAuthorizationIn(trx, 'production', c.grantId, 'test'));
    expect((await findConsentOfGrant(t.db, 'production', c.grantId))!.status).toBe('EXPIRED');
  });
});

describe('revokeFdxConsent', () => {
  const revoke = (
    consentId: string,
    owner: { clientId: string } | { organizationId: string } = { clientId: 'client-a' },
    audit?: Parameters<typeof revokeFdxConsent>[1]['audit'],
  ) => revokeFdxConsent(t.db, { environment: 'production', consentId, owner, reason: 'USER_ACTION', initiator: 'DATA_RECIPIENT', audit });

  it('revokes an active consent with its authorization and tokens, and audits in the same transaction; a second time is already-revoked', async () => {
    const c = await consent();
    await t.db
      .insertInto('oidc_models')
      .values({
        environment: 'production',
        model: 'RefreshToken',
        id: crypto.randomUUID(),
        grant_id: c.grantId,
        payload: JSON.stringify({ kind: 'RefreshToken', clientId: 'client-a' }),
        expires_at: new Date(Date.now() + days(1)),
      })
      .execute();
    const outcome = await revoke(c.id, { clientId: 'client-a' }, (trx, revoked) =>
      recordAudit(trx, {
        event: 'fdx_consent.revoked',
        environment: 'production',
        clientId: revoked.clientId,
        details: { consentId: revoked.id, status: revoked.status },
      }),
    );
    expect(outcome).toBe('revoked');
    const after = (await findConsentOfGrant(t.db, 'production', c.grantId))!;
    expect(after).toMatchObject({
      status: 'REVOKED',
      revocationReason: 'USER_ACTION',
      revocationInitiator: 'DATA_RECIPIENT',
      revokedAt: expect.any(Date),
    });
    expect(after.updatedAt.getTime()).toBe(after.revokedAt!.getTime());
    expect(
      (await t.db.selectFrom('oauth_authorizations').select('revoked_at').where('grant_id', '=', c.grantId).executeTakeFirstOrThrow())
        .revoked_at,
    ).not.toBeNull();
    expect(
      await t.db.selectFrom('oidc_models').select('id').where('grant_id', '=', c.grantId).where('model', '=', 'RefreshToken').execute(),
    ).toEqual([]);
    const audit = await t.db.selectFrom('audit_events').select('details').where('event', '=', 'fdx_consent.revoked').execute();
    expect(audit.map((a) => a.details)).toContainEqual({ consentId: c.id, status: 'REVOKED' });
    expect(await revoke(c.id)).toBe('already-revoked');
  });

  it("answers not-found for another recipient's consent or an unknown id, and revokes by organization too", async () => {
    const c = await consent();
    expect(await revoke(c.id, { clientId: 'client-b' })).toBe('not-found');
    expect(await revoke('nope')).toBe('not-found');
    expect(await revoke(c.id, { organizationId: other.orgId })).toBe('not-found');
    expect(await revoke(c.id, { organizationId: staff.orgId })).toBe('revoked');
  });

  it('leaves an expired consent alone: expired, swept or not', async () => {
    const c = await consent();
    await backdate(c.id);
    expect(await revoke(c.id)).toBe('expired');
    await expireDueConsents(t.db);
    expect(await revoke(c.id)).toBe('expired');
    expect((await findConsentOfGrant(t.db, 'production', c.grantId))?.revokedAt).toBeNull();
  });

  it('lets exactly one of two concurrent revocations win', async () => {
    const c = await consent();
    expect((await Promise.all([revoke(c.id), revoke(c.id)])).sort()).toEqual(['already-revoked', 'revoked']);
  });
});

describe('a consent from its approval to its collection', () => {
  /** The authorization of a grant: revoked (and why) or live. */
  const authorizationOf = (grantId: string) =>
    t.db
      .selectFrom('oauth_authorizations')
      .select(['revoked_at', 'revoked_reason'])
      .where('grant_id', '=', grantId)
      .executeTakeFirstOrThrow();

  it('is PENDING until its code is exchanged, unseen by its recipient, and lapses ten minutes after the approval', async () => {
    const c = await pendingConsent({}, 'client-p');
    expect(c.status).toBe('PENDING');
    expect(c.expiresAt.getTime() - c.createdAt.getTime()).toBe(600_000);
    expect(await findConsentOfRecipient(t.db, 'production', 'client-p', c.id)).toBeUndefined();
    expect(
      await revokeFdxConsent(t.db, {
        environment: 'production',
        consentId: c.id,
        owner: { clientId: 'client-p' },
        reason: 'USER_ACTION',
        initiator: 'DATA_RECIPIENT',
      }),
    ).toBe('not-found');
    // Never collected: it lapses, and the sweep ends its authorization.
    await backdate(c.id);
    expect((await findConsentOfGrant(t.db, 'production', c.grantId))?.status).toBe('EXPIRED');
    await expireDueConsents(t.db);
    expect((await t.db.selectFrom('fdx_consents').select('status').where('id', '=', c.id).executeTakeFirstOrThrow()).status).toBe(
      'EXPIRED',
    );
    expect(await authorizationOf(c.grantId)).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: 'fdx_consent_expired' });
  });

  it('the exchange makes it ACTIVE until its end, counted from the approval; a second call changes nothing', async () => {
    const c = await pendingConsent({ durationPeriod: 30 }, 'client-q');
    const { consent: active, superseded } = await activateFdxConsentIn(t.db, { environment: 'production', consentId: c.id });
    expect(active).toMatchObject({ id: c.id, status: 'ACTIVE' });
    expect(active!.expiresAt.getTime() - c.createdAt.getTime()).toBe(days(30));
    expect(superseded).toEqual([]);
    expect((await findConsentOfRecipient(t.db, 'production', 'client-q', c.id))?.status).toBe('ACTIVE');
    expect(await activateFdxConsentIn(t.db, { environment: 'production', consentId: c.id })).toEqual({ superseded: [] });
  });

  it("replaces the recipient's earlier consent for the organization once collected, and only that one", async () => {
    const earlier = await consent({}, 'client-r');
    const othersConsent = await consent({}, 'client-s');
    const renewal = await pendingConsent({}, 'client-r');
    // Approved, not yet collected: the earlier consent still works.
    expect((await findConsentOfGrant(t.db, 'production', earlier.grantId))?.status).toBe('ACTIVE');
    const { superseded } = await activateFdxConsentIn(t.db, { environment: 'production', consentId: renewal.id });
    expect(superseded.map((s) => s.id)).toEqual([earlier.id]);
    expect(await findConsentOfGrant(t.db, 'production', earlier.grantId)).toMatchObject({
      status: 'REVOKED',
      revocationReason: 'BUSINESS_RULE',
      revocationInitiator: 'DATA_PROVIDER',
    });
    expect(await authorizationOf(earlier.grantId)).toMatchObject({ revoked_reason: 'fdx_consent_superseded' });
    expect((await findConsentOfGrant(t.db, 'production', othersConsent.grantId))?.status).toBe('ACTIVE');
    expect((await findConsentOfGrant(t.db, 'production', renewal.grantId))?.status).toBe('ACTIVE');
  });

  it('a PENDING consent may be revoked by its organization (the authorization with it)', async () => {
    const c = await pendingConsent({}, 'client-t');
    expect(
      await revokeFdxConsent(t.db, {
        environment: 'production',
        consentId: c.id,
        owner: { organizationId: staff.orgId },
        reason: 'USER_ACTION',
        initiator: 'DATA_PROVIDER',
      }),
    ).toBe('revoked');
    expect((await authorizationOf(c.grantId)).revoked_at).not.toBeNull();
  });
});
