import { recordAudit } from '../../audit/audit-log.js';
import type { FdxPartyType, FdxRevocationReason } from '../../authorizations/fdx-consent.js';
import { revokeFdxConsent, type RevocationOutcome } from '../../authorizations/fdx-consents.js';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import type { Recipient } from '../routing/caller.js';
import { findConsentParties, type ConsentPartiesRow } from './consent-parties-repository.js';

/** The Consent API's reads and its revocation (docs/api.md, "FDX bank-data API", Consent API). */

/** The parties a ConsentGrant names: its data recipient (the client) and its data provider's customer (the organization). */
export function consentParties(db: Db, environment: Environment, clientId: string, organizationId: string): Promise<ConsentPartiesRow> {
  return findConsentParties(db, environment, clientId, organizationId);
}

/**
 * The recipient revokes one of its consents, and with it the authorization and its tokens
 * (authorizations/fdx-consents.ts), with the audit row in the same transaction. No person is
 * signed in: the audit log names the application as who acted.
 */
export function revokeConsentAsRecipient(
  db: Db,
  recipient: Recipient,
  consentId: string,
  revocation: { reason: FdxRevocationReason; initiator: FdxPartyType },
  trace: { ip: string | null; requestId: string | null },
): Promise<RevocationOutcome> {
  const { reason, initiator } = revocation;
  return revokeFdxConsent(db, {
    environment: recipient.environment,
    consentId,
    owner: { clientId: recipient.clientId },
    reason,
    initiator,
    audit: (trx, consent) =>
      recordAudit(trx, {
        event: 'fdx_consent.revoked',
        environment: consent.environment,
        organizationId: consent.organizationId,
        clientId: recipient.clientId,
        ip: trace.ip,
        requestId: trace.requestId,
        details: { consent_id: consent.id, grant_id: consent.grantId, reason, initiator, acted_by: 'application' },
      }),
  });
}
