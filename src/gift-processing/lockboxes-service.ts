import { isUniqueViolationOf } from '../errors/unique-violation.js';
import crypto from 'node:crypto';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { PostalAddressJson } from '../db/schema-gift.js';
import { invalid } from '../errors/domain-error.js';
import { findProcessingAccount } from '../grantmaking/accounts-repository.js';
import { insertPaymentSource } from './payment-sources-repository.js';
import {
  findLockbox,
  insertLockbox,
  insertLockboxRequest,
  listLockboxes,
  listLockboxesForAdmin,
  locationTaken,
  reserveLockboxRequest,
  setRequestLockbox,
  type Scope,
} from './lockboxes-repository.js';

export type LockboxRow = NonNullable<Awaited<ReturnType<typeof findLockbox>>>;

export function lockboxesPage(db: Db, scope: Scope, cursor: Cursor | undefined, limit: number): Promise<LockboxRow[]> {
  return listLockboxes(db, scope, cursor, limit);
}

export function lockboxOf(db: Db, scope: Scope, id: string): Promise<LockboxRow | undefined> {
  return findLockbox(db, scope, id);
}

export function lockboxesForAdmin(db: Db, organizationId?: string) {
  return listLockboxesForAdmin(db, organizationId);
}

/**
 * A PO box request of a nonprofit to a lockbox provider (docs/gift-processing.md, "The API"): its
 * id, 24 random bytes in base64url, is the one-time value the provider answers with. Audited.
 */
export async function requestLockbox(
  db: Db,
  input: { nonprofitId: string; providerId: string; providerEin: string; environment: Environment; via: 'admin_cli' },
): Promise<string> {
  return inTransaction(db, async (trx) => {
    const row = await insertLockboxRequest(trx, {
      id: crypto.randomBytes(24).toString('base64url'),
      environment: input.environment,
      organization_id: input.nonprofitId,
      provider_organization_id: input.providerId,
      fulfilled_at: null,
      lockbox_id: null,
    });
    // The request_id is a one-time credential of the provider's answer: never in the audit trail.
    await recordAudit(trx, {
      event: 'lockbox.requested',
      environment: input.environment,
      organizationId: input.nonprofitId,
      details: { provider_ein: input.providerEin, via: input.via },
    });
    return row.id;
  });
}

export interface MailboxFulfillment {
  requestId: string;
  locationId: string;
  address: PostalAddressJson;
}

const LOCATION_ID = /^po_[0-9]{1,18}$/;

/**
 * The provider's answer to a PO box request (provisionMailbox), in one transaction: the request
 * is taken once (a burst with the same id makes one lockbox), then the nonprofit's `lockbox`
 * payment source on its processing account and the lockbox. Every refusal is invalid (400): the
 * published operation names no 404.
 */
export async function fulfillLockboxRequest(db: Db, provider: Scope, input: MailboxFulfillment): Promise<LockboxRow> {
  if (!LOCATION_ID.test(input.locationId)) throw invalid('location_id must be po_<number>, e.g. po_543.');
  return inTransaction(db, async (trx) => {
    const request = await reserveLockboxRequest(trx, input.requestId, provider.organizationId, provider.environment);
    if (!request)
      throw invalid('request_id is not an open PO box request of this lockbox provider: it is unknown, or it was already fulfilled.');
    if (await locationTaken(trx, provider.organizationId, provider.environment, input.locationId))
      throw invalid(`location_id ${input.locationId} is already one of this provider's lockboxes.`);
    const account = await findProcessingAccount(trx, request.organization_id, provider.environment);
    if (!account) throw invalid('The nonprofit of this request has no processing financial account.');
    const source = await insertPaymentSource(trx, {
      id: prefixedId('payment_source'),
      environment: provider.environment,
      organization_id: request.organization_id,
      financial_account_id: account.id,
      name: `Lockbox ${input.locationId}`,
      source_type: 'lockbox',
      ach_account_number: null,
      ach_routing_number: null,
    });
    let lockbox: LockboxRow;
    try {
      lockbox = await insertLockbox(trx, {
        id: prefixedId('lockbox'),
        environment: provider.environment,
        organization_id: request.organization_id,
        provider_organization_id: provider.organizationId,
        location_id: input.locationId,
        address: JSON.stringify(input.address),
        payment_source_id: source.id,
        request_id: request.id,
      });
    } catch (error) {
      // Two requests naming the same new location at once: the unique key decides.
      if (isUniqueViolationOf(error, 'lockboxes_location_key'))
        throw invalid(`location_id ${input.locationId} is already one of this provider's lockboxes.`);
      throw error;
    }
    await setRequestLockbox(trx, request.id, lockbox.id);
    return lockbox;
  });
}
