import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { EventSubscriptionsTable, EventsTable, SubscriptionStatus } from '../db/schema-events.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';

type Scope = { environment: Environment; organizationId: string };

export type EventRow = Selectable<EventsTable>;
export type SubscriptionRow = Selectable<EventSubscriptionsTable>;

/** Events of `categories` (an API version's, or the one asked for), newest first. */
export function listEvents(db: Executor, scope: Scope, categories: readonly string[], cursor: Cursor | undefined, limit: number) {
  const query = db
    .selectFrom('events')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('category', 'in', categories);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findEvent(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('events')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listSubscriptions(db: Executor, scope: Scope, categories: readonly string[], cursor: Cursor | undefined, limit: number) {
  const query = db
    .selectFrom('event_subscriptions')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('category', 'in', categories);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findSubscription(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('event_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/** The same, its row locked until the transaction ends: a change and its audit row see the status they replace. */
export function lockSubscription(trx: Executor, scope: Scope | undefined, id: string) {
  let query = trx.selectFrom('event_subscriptions').selectAll().where('id', '=', id);
  if (scope) query = query.where('organization_id', '=', scope.organizationId).where('environment', '=', scope.environment);
  return query.forUpdate().executeTakeFirst();
}

/**
 * Serialises the subscription writes of one organization's environment until the transaction
 * ends, so the limit and the duplicate check hold under concurrent creates.
 */
export async function lockSubscriptionsOf(trx: Executor, scope: Scope): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`almoner:event_subscriptions:${scope.organizationId}:${scope.environment}`}))`.execute(
    trx,
  );
}

/** The subscription (not deleted) of the scope to this URL and category, if any. */
export function findSameSubscription(db: Executor, scope: Scope, url: string, category: string) {
  return db
    .selectFrom('event_subscriptions')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('category', '=', category)
    .where('url', '=', url)
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
}

/** Subscriptions of the scope that are not deleted. */
export async function countSubscriptions(db: Executor, scope: Scope): Promise<number> {
  const row = await db
    .selectFrom('event_subscriptions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('status', '<>', 'deleted')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Any scope's subscription (the admin CLI). */
export function findSubscriptionById(db: Executor, id: string) {
  return db.selectFrom('event_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertSubscription(
  db: Executor,
  values: { id: string; environment: Environment; organization_id: string; url: string; category: string; signing_secret: string },
) {
  return db.insertInto('event_subscriptions').values(values).returningAll().executeTakeFirstOrThrow();
}

export function setSubscriptionStatus(db: Executor, id: string, status: SubscriptionStatus) {
  return db
    .updateTable('event_subscriptions')
    .set({ status, updated_at: new Date(), ...(status === 'active' ? { failing_since: null, consecutive_failures: 0 } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
