import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import { recordAudit } from '../audit/audit-log.js';
import { conflict, notFound } from '../errors/domain-error.js';
import { revokeAuthorizationIn } from '../authorizations/authorizations.js';
import { lockLiveAuthorizationsOfOrganization } from '../authorizations/repository.js';
import { formatEin } from './ein.js';
import { countRowsOfOrganization, deleteOrganization, deleteUnusedProcessingAccounts } from './organization-removal-repository.js';
import * as repo from './repository.js';
import { requireOrganization } from './service.js';

/**
 * What an organization holds, by the words an operator reads, each counted by the column that
 * ties it to the organization (every such foreign key is ON DELETE CASCADE, so deleting the
 * organization deletes them and what hangs off them: statements, deliveries, tokens' rows).
 */
const HOLDINGS = [
  ['members', 'memberships', 'organization_id'],
  ['authorizations', 'oauth_authorizations', 'organization_id'],
  ['api keys', 'api_keys', 'organization_id'],
  ['connects', 'connects', 'organization_id'],
  ['donations', 'donations', 'organization_id'],
  ['grants', 'grants', 'organization_id'],
  ['deposit accounts', 'deposit_accounts', 'organization_id'],
  ['events', 'events', 'organization_id'],
  ['event subscriptions', 'event_subscriptions', 'organization_id'],
  ['invitations', 'invitations', 'organization_id'],
  ['donor accounts', 'donor_accounts', 'fund_provider_id'],
  ['grant requests', 'grant_requests', 'fund_provider_id'],
  ['giving pools', 'giving_pools', 'fund_provider_id'],
] as const;

export type Holdings = Record<(typeof HOLDINGS)[number][0], number>;

/**
 * Money records, which outlive their organization (docs/ledger.md, "What the database
 * guarantees": an organization with ledger accounts is not deleted): --force does not remove them.
 * A processing account that never moved money is not one: it goes first.
 */
const MONEY_RECORDS = [['financial accounts', 'financial_accounts', 'organization_id']] as const;

/** Counts, in one statement, everything the organization holds (live or not: it is all data). */
export async function organizationHoldings(db: Executor, organizationId: string): Promise<Holdings> {
  const rows = await countRowsOfOrganization(db, organizationId, HOLDINGS);
  return Object.fromEntries(rows.map((r) => [r.label, r.n])) as Holdings;
}

/**
 * `orgs remove`: refuses (409, listing what exists) while the organization holds anything;
 * with `force`, in one transaction under the organization's lock, every live authorization
 * (either subject, both environments) is revoked with its tokens and sessions' references,
 * then the organization is deleted with all it holds. Audited with what it held.
 */
export async function removeOrganization(
  db: Db,
  input: { ein: string; force: boolean },
): Promise<{ ein: string; name: string; removed: Holdings; revoked_authorizations: number }> {
  const org = await requireOrganization(db, input.ein);
  return inTransaction(db, async (trx) => {
    if (!(await repo.lockOrganization(trx, org.id))) throw notFound(`no organization with EIN ${input.ein}`);
    await deleteUnusedProcessingAccounts(trx, org.id);
    const [money] = await countRowsOfOrganization(trx, org.id, MONEY_RECORDS);
    if (money && money.n > 0) {
      throw conflict(
        `${org.name} (${formatEin(org.ein)}) has ${money.n} ${money.label}, whose ledger records are kept: it cannot be removed, even with --force`,
      );
    }
    const holdings = await organizationHoldings(trx, org.id);
    const held = Object.entries(holdings).filter(([, n]) => n > 0);
    if (held.length > 0 && !input.force) {
      throw conflict(
        `${org.name} (${formatEin(org.ein)}) still has ${held.map(([label, n]) => `${n} ${label}`).join(', ')}; remove them first, or pass --force to delete the organization with all of it`,
      );
    }
    let revoked = 0;
    for (const a of await lockLiveAuthorizationsOfOrganization(trx, org.id)) {
      if (await revokeAuthorizationIn(trx, a.environment, a.grant_id, 'organization_removed')) revoked += 1;
    }
    await deleteOrganization(trx, org.id);
    await recordAudit(trx, {
      event: 'organization.removed',
      organizationId: org.id,
      details: {
        ein: formatEin(org.ein),
        name: org.name,
        kind: org.kind,
        forced: input.force,
        held: holdings,
        revoked_authorizations: revoked,
      },
    });
    return { ein: formatEin(org.ein), name: org.name, removed: holdings, revoked_authorizations: revoked };
  });
}
