import { advanceGrantsOfApprovedAccount, cancelGrantsOfRejectedAccount } from './captured-grants.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import { conflict, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { emitEvent } from '../webhooks/outbox.js';
import type { Cursor } from '../db/keyset.js';
import {
  findDonorAccount,
  findDonorAccountIdByEmail,
  insertDonorAccount,
  listDonorAccounts,
  updateDonorAccount,
  type DonorAccountFilters,
  type DonorAccountRow,
} from './donor-accounts-repository.js';
import { releaseAwaitingGrantRequests } from './grant-requests-repository.js';
import type { DafScope } from './scope.js';

export interface DonorInput {
  email?: string;
  first_name?: string;
  last_name?: string;
  phone?: string;
}

function event(scope: Omit<DafScope, 'principal'>, category: 'donor_account.created' | 'donor_account.updated', id: string) {
  return {
    environment: scope.environment,
    organizationId: scope.fundProviderId,
    category,
    objectId: id,
    objectType: 'donor_account' as const,
  };
}

/** A new pending account; its email is how DAFpay later matches the donor, so it is unique per provider. */
export async function createDonorAccount(
  trx: Executor,
  scope: Omit<DafScope, 'principal'>,
  input: { donor: DonorInput & { email: string }; external_id?: string; metadata?: Record<string, string> },
): Promise<DonorAccountRow> {
  const email = input.donor.email.trim().toLowerCase();
  const existing = await findDonorAccountIdByEmail(trx, scope, email);
  if (existing) throw conflict(`A donor account for ${email} already exists (${existing.id}).`);
  const row = await insertDonorAccount(trx, {
    id: prefixedId('donor_account'),
    environment: scope.environment,
    fund_provider_id: scope.fundProviderId,
    email,
    first_name: input.donor.first_name ?? null,
    last_name: input.donor.last_name ?? null,
    phone: input.donor.phone ?? null,
    external_id: input.external_id ?? null,
    metadata: input.metadata,
  }).catch((error: unknown) => mapUniqueViolation(error, { donor_accounts_email_key: `A donor account for ${email} already exists.` }));
  await emitEvent(trx, event(scope, 'donor_account.created', row.id));
  return row;
}

/** createDonorAccount in a transaction of its own (the provider's API call). */
export function openDonorAccount(
  db: Db,
  scope: Omit<DafScope, 'principal'>,
  input: Parameters<typeof createDonorAccount>[2],
): Promise<DonorAccountRow> {
  return inTransaction(db, (trx) => createDonorAccount(trx, scope, input));
}

/** One of the provider's donor accounts, or undefined. */
export function donorAccountOf(db: Db, scope: DafScope, id: string): Promise<DonorAccountRow | undefined> {
  return findDonorAccount(db, scope, id);
}

/** A page of the provider's donor accounts, newest first. */
export function donorAccountsPage(
  db: Db,
  scope: DafScope,
  filters: DonorAccountFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<DonorAccountRow[]> {
  return listDonorAccounts(db, scope, filters, cursor, limit);
}

export async function updateDonorAccountFields(
  db: Db,
  scope: DafScope,
  id: string,
  input: { donor?: Omit<DonorInput, 'email'>; external_id?: string; metadata?: Record<string, string> },
): Promise<DonorAccountRow> {
  return inTransaction(db, async (trx) => {
    const row = await findDonorAccount(trx, scope, id, true);
    if (!row) throw notFound('The donor account was not found.');
    const updated = await updateDonorAccount(trx, id, {
      ...(input.donor?.first_name !== undefined ? { first_name: input.donor.first_name } : {}),
      ...(input.donor?.last_name !== undefined ? { last_name: input.donor.last_name } : {}),
      ...(input.donor?.phone !== undefined ? { phone: input.donor.phone } : {}),
      ...(input.external_id !== undefined ? { external_id: input.external_id } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    });
    await emitEvent(trx, event(scope, 'donor_account.updated', id));
    return updated;
  });
}

/** Disable/enable: only an approved account; idempotent (no change, no event). */
export async function setDonorAccountDisabled(db: Db, scope: DafScope, id: string, disabled: boolean): Promise<DonorAccountRow> {
  return inTransaction(db, async (trx) => {
    const row = await findDonorAccount(trx, scope, id, true);
    if (!row) throw notFound('The donor account was not found.');
    if (row.status !== 'approved')
      throw conflict(`The donor account is ${row.status}; only an approved account can be ${disabled ? 'disabled' : 'enabled'}.`);
    if (row.disabled === disabled) return row;
    const updated = await updateDonorAccount(trx, id, { disabled });
    await emitEvent(trx, event(scope, 'donor_account.updated', id));
    return updated;
  });
}

/**
 * Approves a pending account (token verification or redemption) and releases its grant
 * requests that waited for the decision, each change with its event, in the caller's transaction.
 */
export async function approveDonorAccount(
  trx: Executor,
  scope: Omit<DafScope, 'principal'>,
  row: DonorAccountRow,
  by: string,
  externalId?: string,
): Promise<DonorAccountRow> {
  if (row.status === 'approved' && externalId === undefined) return row;
  const updated = await updateDonorAccount(trx, row.id, {
    ...(row.status === 'pending' ? { status: 'approved', approved_at: new Date(), approved_by: by } : {}),
    ...(externalId !== undefined ? { external_id: externalId } : {}),
  });
  await emitEvent(trx, event(scope, 'donor_account.updated', row.id));
  const released = await releaseAwaitingGrantRequests(trx, row.id);
  // Its DAFpay grants waiting for the approval move on with it (docs/giving.md, "A grant's life").
  if (row.status === 'pending') await advanceGrantsOfApprovedAccount(trx, row.id);
  for (const request of released) {
    await emitEvent(trx, {
      environment: scope.environment,
      organizationId: scope.fundProviderId,
      category: 'grant_request.updated',
      objectId: request.id,
      objectType: 'grant_request',
    });
  }
  return updated;
}

/** The fund provider's decision against a donor (an admin stand-in: the published API has no endpoint for it). */
export async function rejectDonorAccount(db: Db, scope: DafScope, id: string, reason: string): Promise<DonorAccountRow> {
  return inTransaction(db, async (trx) => {
    const row = await findDonorAccount(trx, scope, id, true);
    if (!row) throw notFound('The donor account was not found.');
    if (row.status === 'rejected') return row;
    const updated = await updateDonorAccount(trx, id, {
      status: 'rejected',
      rejected_at: new Date(),
      rejected_by: scope.principal,
      rejection_reason: reason,
    });
    await emitEvent(trx, event(scope, 'donor_account.updated', id));
    await cancelGrantsOfRejectedAccount(trx, id);
    return updated;
  });
}
