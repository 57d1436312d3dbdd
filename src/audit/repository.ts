import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { AuditEventsTable } from '../db/schema.js';

/** Appends one row to the audit trail (audit-log.ts's recordAudit builds it). */
export async function insertAuditEvent(db: Executor, row: Insertable<AuditEventsTable>): Promise<void> {
  await db.insertInto('audit_events').values(row).execute();
}

/**
 * Appends a row with `details.count` 1, or adds one to the count (and sets `last_at`) of the
 * row of the same aggregate key: one statement, so concurrent events land on one row.
 */
export async function countAuditEvent(db: Executor, row: Insertable<AuditEventsTable> & { aggregate_key: string }): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({ ...row, details: sql<string>`${row.details ?? '{}'}::jsonb || jsonb_build_object('count', 1, 'last_at', now())` })
    .onConflict((oc) =>
      oc
        .column('aggregate_key')
        .where('aggregate_key', 'is not', null)
        .doUpdateSet({
          details: sql<string>`audit_events.details || jsonb_build_object('count', coalesce((audit_events.details->>'count')::int, 1) + 1, 'last_at', now())`,
        }),
    )
    .execute();
}

/** An audit row with the address of whoever acted (null: nobody named, e.g. the maker's CLI, or a deleted user). */
export type AuditRow = Selectable<AuditEventsTable> & { actor_email: string | null };

export interface AuditFilters {
  organizationId?: string;
  actorUserId?: string;
  event?: string;
  /** Events at or after this instant. */
  since?: Date;
  /** Events before this instant. */
  until?: Date;
  limit: number;
  /** The id of the last event of the previous page: this page starts below it. */
  before?: string;
}

/** Audit events newest first, filtered, one page at a time (keyset on id); `next` names the following page. */
export async function listAuditEvents(db: Executor, f: AuditFilters): Promise<{ rows: AuditRow[]; next: string | null }> {
  let query = db
    .selectFrom('audit_events as a')
    .leftJoin('users as u', 'u.id', 'a.actor_user_id')
    .selectAll('a')
    .select('u.email as actor_email')
    .orderBy('a.id', 'desc')
    .limit(f.limit + 1);
  if (f.organizationId) query = query.where('a.organization_id', '=', f.organizationId);
  if (f.actorUserId) query = query.where('a.actor_user_id', '=', f.actorUserId);
  if (f.event) query = query.where('a.event', '=', f.event);
  if (f.since) query = query.where('a.occurred_at', '>=', f.since);
  if (f.until) query = query.where('a.occurred_at', '<', f.until);
  if (f.before) query = query.where('a.id', '<', f.before);
  const rows = await query.execute();
  const page = rows.slice(0, f.limit);
  return { rows: page, next: rows.length > f.limit ? page.at(-1)!.id : null };
}

/** The kinds of event an organization's trail holds, for the audit page's filter. */
export async function listAuditEventNames(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('audit_events')
    .select('event')
    .distinct()
    .where('organization_id', '=', organizationId)
    .orderBy('event')
    .execute();
  return rows.map((r) => r.event);
}
