import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { recordAudit } from '../audit/audit-log.js';
import { forbidden, notFound, precondition } from '../errors/domain-error.js';
import type { MembershipActor, RequestTrace } from './memberships.js';
import { countMembersWithoutSecondFactor, findOrganizationById, setOrganizationRequireMfa } from './repository.js';

/**
 * What the settings page shows: whether a second factor is required of every member, and how
 * many members have none; undefined for no such organization.
 */
export async function organizationSecuritySettings(
  db: Db,
  organizationId: string,
): Promise<{ requireMfa: boolean; withoutSecondFactor: number } | undefined> {
  const row = await findOrganizationById(db, organizationId);
  if (!row) return undefined;
  return { requireMfa: row.require_mfa, withoutSecondFactor: await countMembersWithoutSecondFactor(db, organizationId) };
}

/**
 * An organization's security settings (docs/accounts.md, "Organization settings"). Requiring a
 * second factor of every member is an Owner's decision, and only an Owner who signed in with
 * one may turn it on (who turns it on must not be the first one locked out by it).
 */
export async function setRequireMfa(
  db: Db,
  q: { organizationId: string; requireMfa: boolean; actor: MembershipActor; actorHasSecondFactor: boolean } & RequestTrace,
): Promise<void> {
  if (q.actor.role !== 'owner') throw forbidden('only an Owner changes whether a second factor is required');
  if (q.requireMfa && !q.actorHasSecondFactor)
    throw precondition(
      'sign in with a second factor yourself before requiring one of everyone: set one up under Security (/account/security)',
    );
  await inTransaction(db, async (trx) => {
    const updated = await setOrganizationRequireMfa(trx, q.organizationId, q.requireMfa);
    if (!updated) throw notFound('no such organization');
    await recordAudit(trx, {
      event: 'organization.settings_changed',
      organizationId: q.organizationId,
      actorUserId: q.actor.userId,
      ip: q.ip ?? null,
      requestId: q.requestId ?? null,
      details: { require_mfa: q.requireMfa },
    });
  });
}
