import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { revokeAuthorizationIn } from './authorizations.js';
import type { FdxConsentRequest } from './fdx-consent-request.js';
import {
  COLLECTION_WINDOW_MS,
  consentExpiry,
  consentOf,
  type FdxConsent,
  type FdxConsentResource,
  type FdxPartyType,
  type PublishedConsentStatus,
  type FdxRevocationReason,
} from './fdx-consent.js';
import { accountWords } from './fdx-consent-words.js';
import {
  countOrganizationAccounts,
  findAccountsByIds,
  findConsentRow,
  findConsentRowById,
  findConsentRowOfGrant,
  findConsentRowsOfGrants,
  insertConsentRow,
  markConsentActive,
  markConsentRevoked,
  markConsentsSuperseded,
  markDueConsentsExpired,
  type ConsentOwner,
} from './fdx-consents-repository.js';

/**
 * FDX consent grants (docs/api.md, "FDX bank-data API", Consents): what an approver chose to share
 * with a bank-data client, one per authorization (grant). The consent screen records it PENDING
 * (recordFdxConsent, in the approval's transaction); the code's exchange makes it ACTIVE and ends
 * the recipient's earlier consent for the organization (activateFdxConsentIn); the gateway holds
 * every FDX call of the authorization's tokens to it; the Consent API reads and revokes it.
 * Revoking or expiring a consent (or its lapsing uncollected) ends its authorization too, so its
 * refresh tokens stop at once.
 */

/** The approver's choice does not fit the request (the consent screen's own mistake, never the client's). */
export class FdxConsentChoiceError extends Error {
  override name = 'FdxConsentChoiceError';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NewFdxConsent {
  environment: Environment;
  organizationId: string;
  clientId: string;
  /** The provider's Grant id: our authorization's id (authorizations.ts), already inserted. */
  grantId: string;
  /** The approver. */
  userId: string;
  request: FdxConsentRequest;
  /** The organization's deposit accounts the approver chose: required when ACCOUNT was asked, refused otherwise. */
  accountIds: readonly string[];
  /** The consent's id, when the caller named it before the write (newFdxConsentId); else a new one. */
  id?: string;
  /** When it was granted, when the caller fixed it before the write (its expiry follows from it); else now. */
  createdAt?: Date;
}

/** A consent id: 128 random bits, unguessable (docs/bank-data.md, "Consents"). */
export function newFdxConsentId(): string {
  return crypto.randomBytes(16).toString('base64url');
}

/**
 * Records what the approver granted, in the approval's transaction (after the authorization row),
 * PENDING until its code is exchanged (lapsing COLLECTION_WINDOW_MS after the approval otherwise):
 * one ACCOUNT resource per chosen account, one CUSTOMER resource (the organization) when asked.
 * Throws FdxConsentChoiceError when the choice does not fit the request or names an account
 * that is not the organization's in this environment.
 */
export async function recordFdxConsent(trx: Executor, input: NewFdxConsent): Promise<FdxConsent> {
  const ids = [...new Set(input.accountIds)];
  const account = input.request.resources.find((r) => r.resourceType === 'ACCOUNT');
  if (account && ids.length === 0) throw new FdxConsentChoiceError('the request asks for accounts: choose at least one');
  if (!account && ids.length > 0) throw new FdxConsentChoiceError('the request asks for no accounts, so none may be chosen');
  if (
    !ids.every((id) => UUID.test(id)) ||
    (await countOrganizationAccounts(trx, input.environment, input.organizationId, ids)) !== ids.length
  ) {
    throw new FdxConsentChoiceError("a chosen account is not one of the organization's accounts");
  }
  const resources: FdxConsentResource[] = [
    ...(account ? ids.map((resourceId) => ({ resourceType: 'ACCOUNT' as const, resourceId, dataClusters: account.dataClusters })) : []),
    ...input.request.resources
      .filter((r) => r.resourceType === 'CUSTOMER')
      .map((r) => ({ resourceType: r.resourceType, resourceId: input.organizationId, dataClusters: r.dataClusters })),
  ];
  const createdAt = input.createdAt ?? new Date();
  const row = await insertConsentRow(trx, {
    id: input.id ?? newFdxConsentId(),
    environment: input.environment,
    organization_id: input.organizationId,
    client_id: input.clientId,
    grant_id: input.grantId,
    user_id: input.userId,
    duration_type: input.request.durationType,
    duration_period: input.request.durationPeriod ?? null,
    lookback_period: input.request.lookbackPeriod,
    resources: JSON.stringify(resources),
    status: 'PENDING',
    created_at: createdAt,
    updated_at: createdAt,
    expires_at: new Date(createdAt.getTime() + COLLECTION_WINDOW_MS),
  });
  return consentOf(row);
}

/** What a code's exchange did: the consent now ACTIVE (undefined when it was not PENDING), the earlier ones it replaced. */
export interface FdxConsentActivation {
  consent?: FdxConsent;
  superseded: FdxConsent[];
}

/**
 * The recipient exchanged the code of the consent's authorization, inside the exchange's
 * transaction: a PENDING consent becomes ACTIVE until its end (counted from its approval, as
 * the Grant's consentEnds is), and the recipient's other live consents for the same
 * organization (ACTIVE, or approved and not collected) are revoked with their authorizations
 * (BUSINESS_RULE, DATA_PROVIDER): a re-authorization replaces the consent it renews
 * (docs/bank-data.md, "Consents"). A consent
 * that is not PENDING is left as it is (the gateway holds its tokens to what it is).
 */
export async function activateFdxConsentIn(
  trx: Executor,
  input: { environment: Environment; consentId: string },
): Promise<FdxConsentActivation> {
  const pending = await findConsentRowById(trx, input.environment, input.consentId);
  if (!pending || pending.status !== 'PENDING') return { superseded: [] };
  const expiresAt = consentExpiry(
    { durationType: pending.duration_type, durationPeriod: pending.duration_period ?? undefined },
    pending.created_at,
  );
  const row = await markConsentActive(trx, input.environment, input.consentId, expiresAt);
  if (!row) return { superseded: [] };
  const superseded = await markConsentsSuperseded(trx, {
    environment: row.environment,
    clientId: row.client_id,
    organizationId: row.organization_id,
    except: row.id,
  });
  for (const old of superseded) await revokeAuthorizationIn(trx, old.environment, old.grant_id, 'fdx_consent_superseded');
  return { consent: consentOf(row), superseded: superseded.map(consentOf) };
}

/** The consent of an authorization, if its client asked for one (the token endpoint's lookup). */
export async function findConsentOfGrant(db: Executor, environment: Environment, grantId: string): Promise<FdxConsent | undefined> {
  const row = await findConsentRowOfGrant(db, environment, grantId);
  return row && consentOf(row);
}

/** A consent as its recipient sees it: never PENDING. */
export type RecipientConsent = Omit<FdxConsent, 'status'> & { status: PublishedConsentStatus };

/**
 * A consent as its data recipient may see it: another client's id, an unknown id and a consent
 * whose code the recipient never exchanged (PENDING, or lapsed so) are alike undefined.
 */
export async function findConsentOfRecipient(
  db: Executor,
  environment: Environment,
  clientId: string,
  consentId: string,
): Promise<RecipientConsent | undefined> {
  const row = await findConsentRow(db, environment, consentId, { clientId });
  if (!row || row.status === 'PENDING') return undefined;
  const consent = consentOf(row);
  // Read as of now from a row that is not PENDING, so never PENDING.
  return { ...consent, status: consent.status as PublishedConsentStatus };
}

/** One account a consent shares, as people recognise it; `account` is undefined once the account was deleted. */
export interface ConsentedAccount {
  id: string;
  account?: { label: string; masked: string; closed: boolean };
}

export interface ConsentWithAccounts {
  consent: FdxConsent;
  /** The ACCOUNT resources' accounts, in the consent's order. */
  accounts: ConsentedAccount[];
}

/**
 * The consents of several authorizations, by grant id, each with the accounts it shares looked
 * up (the connected applications pages). Two queries whatever the number of authorizations; an
 * account is only ever the consent's organization's.
 */
export async function findConsentsOfGrants(
  db: Executor,
  environment: Environment,
  grantIds: readonly string[],
): Promise<Map<string, ConsentWithAccounts>> {
  const consents = (await findConsentRowsOfGrants(db, environment, grantIds)).map(consentOf);
  const accountIds = [
    ...new Set(consents.flatMap((c) => c.resources.filter((r) => r.resourceType === 'ACCOUNT').map((r) => r.resourceId))),
  ].filter((id) => UUID.test(id));
  const rows = await findAccountsByIds(db, environment, accountIds);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map(
    consents.map((consent) => {
      const accounts = consent.resources
        .filter((r) => r.resourceType === 'ACCOUNT')
        .map((r) => {
          const row = byId.get(r.resourceId);
          return row && row.organization_id === consent.organizationId
            ? { id: r.resourceId, account: { ...accountWords(row), closed: row.status === 'CLOSED' } }
            : { id: r.resourceId };
        });
      return [consent.grantId, { consent, accounts }];
    }),
  );
}

export type RevocationOutcome = 'revoked' | 'already-revoked' | 'not-found' | 'expired';

export interface FdxConsentRevocation {
  environment: Environment;
  consentId: string;
  /** Whose consent it must be: the recipient (Consent API) or the organization (dashboard). */
  owner: ConsentOwner;
  reason: FdxRevocationReason;
  initiator: FdxPartyType;
  /**
   * Writes the audit row inside the revocation's transaction (authorizations/ imports no audit/,
   * so the caller brings it: docs/layout.md, "Boundaries the linter holds").
   */
  audit?: (trx: Executor, consent: FdxConsent) => Promise<void>;
}

/**
 * Revokes an active consent (or, for its organization, a PENDING one) and, in the same
 * transaction, its authorization with every token (authorizations.ts revokeAuthorizationIn), so
 * neither its access nor its refresh tokens work again. An already revoked or expired consent,
 * or one that is not the owner's (a PENDING one is not yet its recipient's), is left alone.
 */
export async function revokeFdxConsent(db: Db, input: FdxConsentRevocation): Promise<RevocationOutcome> {
  return inTransaction(db, async (trx) => {
    const row = await markConsentRevoked(trx, {
      environment: input.environment,
      id: input.consentId,
      owner: input.owner,
      reason: input.reason,
      initiator: input.initiator,
    });
    if (row) {
      await revokeAuthorizationIn(trx, row.environment, row.grant_id, `fdx_consent_revoked:${input.initiator}`);
      await input.audit?.(trx, consentOf(row));
      return 'revoked';
    }
    const existing = await findConsentRow(trx, input.environment, input.consentId, input.owner);
    if (!existing || ('clientId' in input.owner && existing.status === 'PENDING')) return 'not-found';
    return existing.status === 'REVOKED' ? 'already-revoked' : 'expired';
  });
}

/**
 * Revokes the live consent of an authorization inside the caller's transaction, for the
 * organization's staff ending that authorization on a connected applications page
 * (connection-revocation.ts, which then revokes the authorization and writes the audit rows in
 * the same transaction: the order revokeFdxConsent locks rows in, so the two cannot deadlock).
 * Undefined when the authorization has no consent, or its consent is no longer live.
 */
export async function revokeConsentOfGrantIn(
  trx: Executor,
  input: { environment: Environment; grantId: string; organizationId: string; reason: FdxRevocationReason; initiator: FdxPartyType },
): Promise<FdxConsent | undefined> {
  const existing = await findConsentRowOfGrant(trx, input.environment, input.grantId);
  if (!existing || existing.organization_id !== input.organizationId) return undefined;
  const row = await markConsentRevoked(trx, {
    environment: input.environment,
    id: existing.id,
    owner: { organizationId: input.organizationId },
    reason: input.reason,
    initiator: input.initiator,
  });
  return row && consentOf(row);
}

/**
 * The periodic chores' sweep: marks consents past their expiry EXPIRED and ends their
 * authorizations (a ONE_TIME consent's refresh token stops after its hour), and PENDING consents
 * never collected (their authorizations hold no token). Reads already report EXPIRED without it. Returns how many consents expired.
 */
export async function expireDueConsents(db: Db): Promise<number> {
  return inTransaction(db, async (trx) => {
    const due = await markDueConsentsExpired(trx);
    for (const consent of due) await revokeAuthorizationIn(trx, consent.environment, consent.grant_id, 'fdx_consent_expired');
    return due.length;
  });
}
