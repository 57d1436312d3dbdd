import crypto from 'node:crypto';
import { parseEin } from '../accounts/ein.js';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import type { Cursor } from '../db/keyset.js';
import { conflict, invalid, notFound, precondition } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findDirectoryOrganization } from './repository.js';
import {
  decideVerificationRequest,
  findVerificationRequest,
  insertVerificationRequest,
  listVerificationRequests,
  listVerifiedOrganization,
  lockEin,
  lockVerificationRequest,
  organizationIdRequestedFor,
  type GrantmakerScope,
  type VerificationRequestRow,
} from './verification-repository.js';

/**
 * Verification requests (docs/directory.md, "Verification requests"): a grantmaker asks for an
 * organization the directory does not list; an operator approves or rejects it with the admin
 * command, which lists an approved one in the directory. Each change emits its event in the
 * same transaction.
 */

export type { GrantmakerScope, VerificationRequestRow };

export interface NewVerificationRequest {
  ein: string;
  organization_name: string;
  website?: string;
  contact_email?: string;
  recommended_mailing_address: { line1: string; line2?: string; city: string; state: string; zip_code: string };
}

/** A new Organization id, in the directory's form (migration 20261129130200). */
function newOrganizationId(): string {
  return `org_${crypto.randomUUID().replace(/-/g, '')}`;
}

function einOf(input: string): string {
  const ein = parseEin(input);
  if (!ein) throw invalid('ein must be 9 digits, as 12-3456789 or 123456789');
  return ein;
}

async function emit(trx: Trx, row: VerificationRequestRow, category: 'verification_request.created' | 'verification_request.updated') {
  await emitEvent(trx, {
    environment: row.environment,
    organizationId: row.grantmaker_id,
    category,
    objectId: row.id,
    objectType: 'verification_request',
  });
}

export function createVerificationRequest(db: Db, scope: GrantmakerScope, input: NewVerificationRequest): Promise<VerificationRequestRow> {
  const ein = einOf(input.ein);
  const address = input.recommended_mailing_address;
  return inTransaction(db, async (trx) => {
    await lockEin(trx, ein);
    // Only an unlisted organization needs verifying: a listed one is paid by its id already.
    const listed = await findDirectoryOrganization(trx, ein);
    if (listed) throw precondition(`The organization of EIN ${ein} is listed already (id ${listed.id}): it needs no verification request.`);
    const row = await insertVerificationRequest(trx, {
      id: `vr_${crypto.randomUUID().replace(/-/g, '')}`,
      environment: scope.environment,
      grantmaker_id: scope.grantmakerId,
      ein,
      organization_name: input.organization_name.trim(),
      organization_id: (await organizationIdRequestedFor(trx, ein)) ?? newOrganizationId(),
      website: input.website ?? null,
      contact_email: input.contact_email ?? null,
      mailing_line1: address.line1.trim(),
      mailing_line2: address.line2?.trim() || null,
      mailing_city: address.city.trim(),
      mailing_state: address.state,
      mailing_zip_code: address.zip_code,
    }).catch((error: unknown) =>
      mapUniqueViolation(error, {
        verification_requests_open_key: `A verification request for EIN ${ein} is already awaiting review.`,
      }),
    );
    await emit(trx, row, 'verification_request.created');
    return row;
  });
}

export function verificationRequestOf(db: Db, scope: GrantmakerScope, id: string): Promise<VerificationRequestRow | undefined> {
  return findVerificationRequest(db, scope, id);
}

export function verificationRequestsPage(
  db: Db,
  scope: GrantmakerScope,
  ein: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<VerificationRequestRow[]> {
  return listVerificationRequests(db, scope, ein === undefined ? undefined : einOf(ein), cursor, limit);
}

/**
 * The operator's decision (`admin verification-requests approve|reject --id`): needs_review →
 * verified (the organization is listed in the directory under the request's organization id) or
 * failed; audited, with the request's updated event, in one transaction. A decided request is
 * not decided again (409).
 */
export function decideVerification(db: Db, id: string, decision: 'approve' | 'reject'): Promise<VerificationRequestRow> {
  return inTransaction(db, async (trx) => {
    const row = await lockVerificationRequest(trx, id);
    if (!row) throw notFound(`No verification request has the id ${id}.`);
    if (row.status !== 'needs_review') throw conflict(`The verification request ${id} is already ${row.status}.`);
    const decided = await decideVerificationRequest(trx, id, decision === 'approve' ? 'verified' : 'failed');
    const updated = decision === 'approve' ? await listVerifiedOrganization(trx, decided) : decided;
    await recordAudit(trx, {
      event: decision === 'approve' ? 'verification_request.approved' : 'verification_request.rejected',
      environment: row.environment,
      organizationId: row.grantmaker_id,
      details: { verification_request_id: id, ein: row.ein, organization_id: updated.organization_id, via: 'admin_cli' },
    });
    await emit(trx, updated, 'verification_request.updated');
    return updated;
  });
}
