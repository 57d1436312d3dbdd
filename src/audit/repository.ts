import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { AuditEventsTable } from '../db/schema.js';

/** Appends one row to the audit trail (audit-log.ts's recordAudit builds it). */
export async function insertAuditEvent(db: Executor, row: Insertable<AuditEventsTable>): Promise<void> {
  await db.insertInto('audit_events').values(row).execute();
}
