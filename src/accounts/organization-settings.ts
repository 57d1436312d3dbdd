import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { recordAudit } from '../audit/audit-log.js';
import { forbidden, invalid, notFound, precondition } from '../errors/domain-error.js';
import { parseEin } from './ein.js';
import type { MembershipActor, RequestTrace } from './memberships.js';
import {
  countMembersWithoutSecondFactor,
  findOrganizationByEin,
  findOrganizationById,
  setOrganizationRequireMfa,
  setOrganizationRequireSecondApprover,
} from './repository.js';

/**
 * What the settings page shows: whether a second factor is required of every member, and how
 * many members have none; whether disbursements need a second person to approve them; undefined
 * for no such organization.
 */
export async function organizationSecuritySettings(
  db: Db,
  organizationId: string,
): Promise<{ requireMfa: boolean; withoutSecondFactor: number; requireSecondApprover: boolean } | undefined> {
  const row = await findOrganizationById(db, organizationId);
  if (!row) return undefined;
  return {
    requireMfa: row.require_mfa,
    withoutSecondFactor: await countMembersWithoutSecondFactor(db, organizationId),
    requireSecondApprover: row.require_second_approver,
  };
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

/**
 * "Disbursements need a second person to approve" (docs/grantmaking.md, "Approvals by another
 * person"): a grantmaker's Owner turns it on or off (`actor` null: the maker's CLI), audited as
 * the other settings are. Only grantmakers make disbursements, so only they have the setting.
 */
export async function setRequireSecondApprover(
  db: Db,
  q: { organizationId: string; required: boolean; actor: MembershipActor | null } & RequestTrace,
): Promise<void> {
  if (q.actor && q.actor.role !== 'owner') throw forbidden('only an Owner changes whether disbursements need a second person to approve');
  await inTransaction(db, async (trx) => {
    const organization = await findOrganizationById(trx, q.organizationId);
    if (!organization) throw notFound('no such organization');
    if (organization.kind !== 'grantmaker')
      throw invalid(`second_approver: only a grantmaker's disbursements are approved; ${organization.name} is a ${organization.kind}`);
    await setOrganizationRequireSecondApprover(trx, q.organizationId, q.required);
    await recordAudit(trx, {
      event: 'organization.settings_changed',
      organizationId: q.organizationId,
      actorUserId: q.actor?.userId ?? null,
      ip: q.ip ?? null,
      requestId: q.requestId ?? null,
      details: { require_second_approver: q.required, ...(q.actor ? {} : { via: 'admin_cli' }) },
    });
  });
}

/** The maker's CLI: the setting of the organization with this EIN (dashed or not). */
export async function setRequireSecondApproverByEin(db: Db, input: { ein: string; required: boolean }): Promise<{ name: string }> {
  const ein = parseEin(input.ein);
  if (!ein) throw invalid(`ein: "${input.ein}" is not an EIN (12-3456789 or 123456789)`);
  const organization = await findOrganizationByEin(db, ein);
  if (!organization) throw notFound(`no organization with EIN ${input.ein}`);
  await setRequireSecondApprover(db, { organizationId: organization.id, required: input.required, actor: null });
  return { name: organization.name };
}
