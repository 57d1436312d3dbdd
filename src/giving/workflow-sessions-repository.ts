import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { WorkflowSessionsTable } from '../db/schema-giving.js';

export type WorkflowSessionRow = Selectable<WorkflowSessionsTable>;

/** How long after the donor authorizes the platform may capture (docs/giving.md): 410 after. */
export const CAPTURE_WINDOW_MS = 15 * 60_000;

export function insertWorkflowSession(db: Executor, values: Omit<Insertable<WorkflowSessionsTable>, 'expires_at'> & { now?: Date }) {
  const { now = new Date(), ...rest } = values;
  return db
    .insertInto('workflow_sessions')
    .values({ ...rest, authorized_at: now, expires_at: new Date(now.getTime() + CAPTURE_WINDOW_MS) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A session by id, if it is a UUID and exists. */
export function findWorkflowSession(db: Executor, id: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return Promise.resolve(undefined);
  return db.selectFrom('workflow_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}
