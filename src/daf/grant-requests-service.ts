import type { Db } from '../db/database.js';
import { followGrantRequest } from './captured-grants.js';
import { renderMail } from '../mail/render.js';
import { inTransaction, type Trx } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { parseEin } from '../accounts/ein.js';
import { conflict, invalid, notFound, precondition } from '../errors/domain-error.js';
import { findOrganizationOfKind } from '../accounts/repository.js';
import { prefixedId } from '../db/ids.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { MailReceipt, MailSender } from '../mail/sender.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findDonorAccount, findDonorAccountByEmail, type DonorAccountRow } from './donor-accounts-repository.js';
import { createDonorAccount } from './donor-accounts-service.js';
import type { Cursor } from '../db/keyset.js';
import {
  findGivingPool,
  findGrantRequest,
  findOrCreateGivingPool,
  listGivingPools,
  listGrantRequests,
  insertGrantRequest,
  updateGrantRequest,
  type GivingPoolRow,
  type GrantRequestChanges,
  type GrantRequestRow,
} from './grant-requests-repository.js';
import type { DafScope } from './scope.js';
import { issueToken } from './tokens-service.js';

type Row = GrantRequestRow;

/** One of the provider's grant requests, or undefined. */
export function grantRequestOf(db: Db, scope: DafScope, id: string): Promise<Row | undefined> {
  return findGrantRequest(db, scope, id);
}

/** A page of the provider's grant requests (of one donor account, if given), newest first. */
export function grantRequestsPage(
  db: Db,
  scope: DafScope,
  donorAccountId: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<Row[]> {
  return listGrantRequests(db, scope, donorAccountId, cursor, limit);
}

/** One of the provider's giving pools, or undefined. */
export function givingPoolOf(db: Db, scope: DafScope, id: string): Promise<GivingPoolRow | undefined> {
  return findGivingPool(db, scope, id);
}

/** A page of the provider's giving pools (of one donor account, if given), newest first. */
export function givingPoolsPage(
  db: Db,
  scope: DafScope,
  donorAccountId: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<GivingPoolRow[]> {
  return listGivingPools(db, scope, donorAccountId, cursor, limit);
}

async function decide(db: Db, scope: DafScope, id: string, change: (row: Row) => GrantRequestChanges): Promise<Row> {
  return inTransaction(db, async (trx) => {
    const row = await findGrantRequest(trx, scope, id, true);
    if (!row) throw notFound('The grant request was not found.');
    if (row.status === 'submitted' || row.status === 'rejected') throw conflict(`The grant request is already ${row.status}.`);
    const updated = await updateGrantRequest(trx, id, change(row));
    // The DAFpay grant captured with it follows the decision (docs/giving.md, "A grant's life").
    await followGrantRequest(
      trx,
      id,
      updated.status === 'submitted'
        ? { status: 'submitted', externalGrantId: updated.external_grant_id, comment: updated.comment }
        : { status: 'rejected', reason: updated.rejection_reason },
    );
    await emitEvent(trx, {
      environment: scope.environment,
      organizationId: scope.fundProviderId,
      category: 'grant_request.updated',
      objectId: id,
      objectType: 'grant_request',
    });
    return updated;
  });
}

/** The provider has submitted the grant in its system: pending → submitted (412 while the account is undecided). */
export function submitGrantRequest(
  db: Db,
  scope: DafScope,
  id: string,
  input: { external_grant_id?: string; comment?: string },
): Promise<Row> {
  return decide(db, scope, id, (row) => {
    if (row.status === 'awaiting_account_decision')
      throw precondition('The donor account is not approved yet; the grant request is awaiting the account decision.');
    return { status: 'submitted', external_grant_id: input.external_grant_id ?? null, comment: input.comment ?? null };
  });
}

/** The provider will not process the grant; the donor account is unaffected. */
export function rejectGrantRequest(db: Db, scope: DafScope, id: string, input: { reason?: string }): Promise<Row> {
  return decide(db, scope, id, () => ({ status: 'rejected', rejection_reason: input.reason ?? null }));
}

export interface DonorGrantRequest {
  fundProviderEin: string;
  environment: Environment;
  email: string;
  nonprofitEin: string;
  amountCents: number;
  frequency?: 'one_time' | 'monthly' | 'quarterly' | 'annual';
  givingPool?: string;
  formUrl?: string;
  purpose?: string;
  note?: string;
  donorName?: string;
}

/**
 * A grant request arriving from the donor side (outside this product; `admin daf
 * submit-grant-request` stands in). A donor without an approved account gets a pending
 * account and a one-time code by e-mail, which they give to the provider to verify.
 */
export async function submitFromDonor(db: Db, mail: MailSender, keys: KeyedHasher, input: DonorGrantRequest) {
  const providerEin = parseEin(input.fundProviderEin);
  const nonprofitEin = parseEin(input.nonprofitEin);
  if (!providerEin || !nonprofitEin) throw invalid('EINs must be written 12-3456789 or 123456789');
  if (!Number.isInteger(input.amountCents) || input.amountCents <= 0) throw invalid('the amount must be a positive number of cents');
  const provider = await findOrganizationOfKind(db, providerEin, 'fund_provider');
  if (!provider) throw notFound(`no fund provider with EIN ${input.fundProviderEin}`);
  const nonprofit = await findOrganizationOfKind(db, nonprofitEin, 'nonprofit');
  const scope = { environment: input.environment, fundProviderId: provider.id };
  const email = input.email.trim().toLowerCase();
  const result = await inTransaction(db, (trx) =>
    recordDonorGrantRequest(trx, keys, scope, {
      email,
      nonprofitEin,
      nonprofitName: nonprofit?.name ?? null,
      amountCents: input.amountCents,
      frequency: input.frequency ?? 'one_time',
      givingPool: input.givingPool,
      formUrl: input.formUrl,
      purpose: input.purpose,
      note: input.note,
      donorName: input.donorName,
    }),
  );
  const receipt = await mailDonorCode(mail, provider.name, email, result).catch((error: Error) => {
    // The request stands; asking again sends a new code for the same pending account.
    throw new Error(
      `grant request ${result.request.id} recorded, but its verification code was not e-mailed (submit again to send a new one): ${error.message}`,
    );
  });
  return {
    donor_account_id: result.account.id,
    grant_request_id: result.request.id,
    authorization_token_id: result.token?.row.id ?? null,
    emailed: receipt !== undefined,
    /** How the code left: `smtp`, or `dev_table` (the dev profile's outbound_mail, `admin mail list`); null when no code was due. */
    mail_via: receipt?.via ?? null,
  };
}

export interface DonorGrantRequestFields {
  email: string;
  /** 9 digits. */
  nonprofitEin: string;
  nonprofitName: string | null;
  amountCents: number;
  frequency: 'one_time' | 'monthly' | 'quarterly' | 'annual';
  /** The donor's account when already known (the donor flow found or opened it); else found or opened by e-mail. */
  donorAccountId?: string | null;
  givingPool?: string;
  formUrl?: string;
  purpose?: string | null;
  note?: string | null;
  donorName?: string;
}

export interface RecordedDonorGrantRequest {
  account: DonorAccountRow;
  request: Row;
  /** The one-time code to e-mail, when the account is pending. */
  token: Awaited<ReturnType<typeof issueToken>> | undefined;
}

/**
 * A donor's grant request at a fund provider, in the caller's transaction: the donor's account
 * (found, or opened pending), the request (awaiting the account's decision unless approved), its
 * event, and a one-time code for a pending account. The caller mails the code after its commit
 * (mailDonorCode): the donor-side stand-in and a DAFpay capture (docs/giving.md) both call it.
 */
export async function recordDonorGrantRequest(
  trx: Trx,
  keys: KeyedHasher,
  scope: { environment: Environment; fundProviderId: string },
  fields: DonorGrantRequestFields,
): Promise<RecordedDonorGrantRequest> {
  const email = fields.email.trim().toLowerCase();
  const known = fields.donorAccountId ? await findDonorAccount(trx, { ...scope, principal: 'system' }, fields.donorAccountId) : undefined;
  const account =
    known ?? (await findDonorAccountByEmail(trx, scope, email)) ?? (await createDonorAccount(trx, scope, { donor: { email } }));
  const pool = fields.givingPool ? await findOrCreateGivingPool(trx, scope, account.id, fields.givingPool) : undefined;
  const request = await insertGrantRequest(trx, {
    id: prefixedId('grant_req'),
    environment: scope.environment,
    fund_provider_id: scope.fundProviderId,
    donor_account_id: account.id,
    giving_pool_id: pool?.id ?? null,
    status: account.status === 'approved' ? 'pending' : 'awaiting_account_decision',
    ein: fields.nonprofitEin,
    nonprofit_name: fields.nonprofitName,
    amount_cents: fields.amountCents,
    frequency: fields.frequency,
    form_url: fields.formUrl ?? 'https://example.org/donate',
    purpose: fields.purpose ?? null,
    note: fields.note ?? null,
    donor_contact: JSON.stringify({ ...(fields.donorName ? { name: fields.donorName } : {}), email: account.email }),
  });
  await emitEvent(trx, {
    ...scope,
    organizationId: scope.fundProviderId,
    category: 'grant_request.created',
    objectId: request.id,
    objectType: 'grant_request',
  });
  const token = account.status === 'pending' ? await issueToken(trx, keys, scope, account) : undefined;
  return { account, request, token };
}

/**
 * Mails a recorded request's one-time code, once its transaction committed; undefined when no
 * code was due. `emailed` is what the sender answered, never inferred (docs/api.md, donor-advised funds).
 */
export async function mailDonorCode(
  mail: MailSender,
  providerName: string,
  email: string,
  recorded: Pick<RecordedDonorGrantRequest, 'token'>,
): Promise<MailReceipt | undefined> {
  if (!recorded.token) return undefined;
  return mail.send({
    to: email,
    ...renderMail('daf-code', {
      provider: providerName,
      code: recorded.token.code,
      expires: recorded.token.row.expires_at.toISOString().slice(0, 10),
    }),
  });
}
