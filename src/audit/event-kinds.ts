/**
 * Every kind of event the audit trail records (docs/accounts.md, "Audit log"): the one list the
 * recorders are typed against, so a new kind is added here, and the one the audit page's filter
 * accepts, so a kind that has no row yet is an empty list, not a refusal.
 */
export const AUDIT_EVENT_KINDS = [
  'api_key.created',
  'api_key.revoked',
  'authorization.revoked',
  'authorization_code.replay',
  'consent.denied',
  'consent.granted',
  'disbursement.completed',
  'disbursement.failed',
  'disbursement.rejected',
  'disbursement.resubmitted',
  'disbursement.returned',
  'disbursement.verified',
  'fdx_consent.revoked',
  'gateway.ip_denied',
  'grant.canceled',
  'grant.completed',
  'inbound_transfer.completed',
  'inbound_transfer.failed',
  'invitation.accepted',
  'invitation.created',
  'invitation.revoked',
  'lockbox.requested',
  'login.failed',
  'login.locked_out',
  'login.succeeded',
  'logout',
  'membership.added',
  'membership.removed',
  'membership.role_changed',
  'organization.created',
  'organization.removed',
  'organization.settings_changed',
  'payment_source.created',
  'property.created',
  'refresh_token.reuse',
  'second_factor.added',
  'second_factor.recovery_code_used',
  'second_factor.recovery_codes_replaced',
  'second_factor.removed',
  'second_factor.reset',
  'session.ended',
  'session.ended_everywhere',
  'token.issued',
  'user.created',
  'user.disabled',
  'user.enabled',
  'user.password_changed',
  'user.password_reset',
  'verification_request.approved',
  'verification_request.rejected',
  'webhook.added',
  'webhook.deleted',
  'webhook.disabled',
  'webhook.enabled',
  'webhook.paused',
  'webhook.replayed',
  'webhook.resumed',
] as const;

export type AuditEventKind = (typeof AUDIT_EVENT_KINDS)[number];

const KNOWN: ReadonlySet<string> = new Set(AUDIT_EVENT_KINDS);

export function isAuditEventKind(value: string): value is AuditEventKind {
  return KNOWN.has(value);
}
