import type { DonorAccountRow } from './donor-accounts-repository.js';
import type { GivingPoolRow, GrantRequestRow } from './grant-requests-repository.js';
import type { TokenRow } from './tokens-repository.js';

/** Rows → the published shapes (2026-04-01 document). */

export function donorAccountView(row: DonorAccountRow) {
  return {
    id: row.id,
    status: row.status,
    donor: { email: row.email, first_name: row.first_name, last_name: row.last_name, phone: row.phone },
    external_id: row.external_id,
    approval:
      row.status === 'approved' && row.approved_at
        ? { approved_at: row.approved_at.toISOString(), approved_by: row.approved_by ?? 'system' }
        : null,
    rejection:
      row.status === 'rejected' && row.rejected_at
        ? {
            rejected_at: row.rejected_at.toISOString(),
            rejected_by: row.rejected_by ?? 'system',
            ...(row.rejection_reason ? { rejection_reason: row.rejection_reason } : {}),
          }
        : null,
    disabled: row.disabled,
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type TokenStatus = 'pending' | 'verified' | 'revoked' | 'expired';

/** A pending token past expires_at reads as expired; nothing has to run at expiry. */
export function tokenStatus(row: Pick<TokenRow, 'status' | 'expires_at'>, now = Date.now()): TokenStatus {
  return row.status === 'pending' && row.expires_at.getTime() <= now ? 'expired' : row.status;
}

export function authorizationTokenView(row: TokenRow, code?: string) {
  return {
    id: row.id,
    donor_account_id: row.donor_account_id,
    status: tokenStatus(row),
    ...(code ? { code } : {}),
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ...(row.verified_at ? { verified_at: row.verified_at.toISOString() } : {}),
    ...(row.revoked_at ? { revoked_at: row.revoked_at.toISOString() } : {}),
    metadata: row.metadata,
  };
}

export function givingPoolView(row: GivingPoolRow) {
  return {
    id: row.id,
    name: row.name,
    donor_account_id: row.donor_account_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    metadata: row.metadata,
  };
}

export function grantRequestView(row: GrantRequestRow) {
  return {
    id: row.id,
    donor_account_id: row.donor_account_id,
    giving_pool_id: row.giving_pool_id,
    status: row.status,
    ein: row.ein.length === 9 ? `${row.ein.slice(0, 2)}-${row.ein.slice(2)}` : row.ein,
    ...(row.nonprofit_name ? { nonprofit_name: row.nonprofit_name } : {}),
    amount_cents: Number(row.amount_cents),
    frequency: row.frequency,
    form_url: row.form_url,
    purpose: row.purpose,
    note: row.note,
    ...(row.donor_contact ? { donor_contact: row.donor_contact } : {}),
    rejection_reason: row.rejection_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
