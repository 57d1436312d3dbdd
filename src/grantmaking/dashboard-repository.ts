import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { Cursor } from '../db/keyset.js';
import type { Scope } from './accounts-repository.js';

/**
 * What the dashboard's disbursement pages read (docs/accounts.md, "Grantmaking and incoming
 * disbursements"): a grantmaker's disbursements with their recipients' names, and a nonprofit's
 * incoming ones with their grantmakers' names, newest first, one more than `limit` (so the
 * caller knows whether an older page follows).
 */

const newestFirst = (cursor: Cursor | undefined) =>
  cursor ? sql<boolean>`(d.created_at, d.id) < (${cursor.createdAt}, ${cursor.id})` : sql<boolean>`true`;

/** Where a page starts: after the disbursement `id` of the same list (undefined: an id not in it). */
export function disbursementCursor(db: Executor, environment: Environment, id: string) {
  return db
    .selectFrom('disbursements')
    .select(['id', 'created_at', 'organization_id', 'recipient_organization_id'])
    .where('id', '=', id)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

export function grantmakerDisbursements(db: Executor, scope: Scope, cursor: Cursor | undefined, limit: number) {
  return db
    .selectFrom('disbursements as d')
    .innerJoin('directory_organizations as r', 'r.id', 'd.recipient_organization_id')
    .select(['d.id', 'd.amount', 'd.status', 'd.created_by', 'd.created_at', 'd.approved_at', 'd.updated_at', 'r.name as recipient_name'])
    .where('d.organization_id', '=', scope.organizationId)
    .where('d.environment', '=', scope.environment)
    .where(newestFirst(cursor))
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit + 1)
    .execute();
}

/**
 * The disbursements to the directory organization of `ein` (nine digits) that their grantmaker
 * approved: one still pending approval, or canceled before approval, is the grantmaker's draft.
 */
export function incomingDisbursements(
  db: Executor,
  q: { ein: string; environment: Environment },
  cursor: Cursor | undefined,
  limit: number,
) {
  return db
    .selectFrom('disbursements as d')
    .innerJoin('directory_organizations as r', 'r.id', 'd.recipient_organization_id')
    .innerJoin('organizations as g', 'g.id', 'd.organization_id')
    .select(['d.id', 'd.amount', 'd.status', 'd.created_at', 'd.approved_at', 'd.updated_at', 'g.name as grantmaker_name'])
    .where('r.ein', '=', q.ein)
    .where('d.environment', '=', q.environment)
    .where('d.approved_at', 'is not', null)
    .where(newestFirst(cursor))
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit + 1)
    .execute();
}

/** The directory organization of `ein`, the recipient a nonprofit's incoming disbursements name. */
export function directoryOrganizationOfEin(db: Executor, ein: string) {
  return db.selectFrom('directory_organizations').select(['id', 'name']).where('ein', '=', ein).executeTakeFirst();
}
