import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { CONNECTION_REVOCATION_REASON, revokeConnection } from '../authorizations/connection-revocation.js';
import type { FdxPartyType } from '../authorizations/fdx-consent.js';
import { findConnection, listManagedConnections, listOrganizationConnections, type ConnectionRow } from './connections-repository.js';

/**
 * The connected applications pages' reads and revocation (docs/oauth.md, "Connected
 * applications"): which page may show or revoke which authorization is the pages' rule.
 */

export type { ConnectionRow };

/** The live authorizations a user manages in one environment: theirs, and those of the organizations given. */
export function managedConnections(
  db: Db,
  environment: Environment,
  userId: string,
  adminOrganizationIds: readonly string[],
): Promise<ConnectionRow[]> {
  return listManagedConnections(db, environment, userId, adminOrganizationIds);
}

/** Every live authorization for one organization in one environment, whoever approved it, newest first. */
export function organizationConnections(db: Db, environment: Environment, organizationId: string): Promise<ConnectionRow[]> {
  return listOrganizationConnections(db, environment, organizationId);
}

/** One authorization of this environment, revoked or not; the page decides who may see it. */
export function connectionOf(db: Db, environment: Environment, grantId: string): Promise<ConnectionRow | undefined> {
  return findConnection(db, environment, grantId);
}

/** Where a revocation was asked for. */
export type RevocationPage = 'connections_page' | 'organization_page';

/** Who ends a bank-data consent, in FDX's words: the person who approved it, or the organization (the data provider). */
const INITIATOR: Readonly<Record<RevocationPage, FdxPartyType>> = {
  connections_page: 'INDIVIDUAL',
  organization_page: 'DATA_PROVIDER',
};

/**
 * Ends an authorization and every token it issued, with its audit rows, in one transaction
 * (nothing when it ended already): authorizations/connection-revocation.ts. A bank-data consent
 * it holds is revoked in the same transaction (USER_ACTION), so its recipient reads it REVOKED
 * through the Consent API. The audit rows name `actor`, who revoked it, whoever approved it.
 */
export async function revokeConnectionOnPage(
  db: Db,
  environment: Environment,
  row: ConnectionRow,
  via: RevocationPage,
  actor: { userId: string; ip: string | null; requestId: string | null },
): Promise<void> {
  if (row.revoked_at) return;
  const initiator = INITIATOR[via];
  await revokeConnection(db, {
    environment,
    grantId: row.grant_id,
    organizationId: row.organization_id,
    initiator,
    audit: async (trx, { authorization: ended, consent }) => {
      const reason = CONNECTION_REVOCATION_REASON;
      const audit = {
        environment,
        actorUserId: actor.userId,
        organizationId: row.organization_id,
        clientId: row.client_id,
        ip: actor.ip,
        requestId: actor.requestId,
      };
      if (ended)
        await recordAudit(trx, {
          ...audit,
          event: 'authorization.revoked',
          details: { grant_id: row.grant_id, subject_type: row.subject_type, via, ...(consent ? { fdx_consent_id: consent.id } : {}) },
        });
      if (consent)
        await recordAudit(trx, {
          ...audit,
          event: 'fdx_consent.revoked',
          details: { consent_id: consent.id, grant_id: row.grant_id, reason, initiator, via },
        });
    },
  });
}
