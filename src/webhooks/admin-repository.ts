import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { notFound } from '../errors/domain-error.js';

/** An organization's deliveries in one environment (the dashboard); absent: every delivery (the admin CLI). */
type DeliveryScope = { organizationId: string; environment: Environment } | undefined;

export async function listDeliveries(db: Db, filters: { subscriptionId?: string; status?: string; limit: number; scope?: DeliveryScope }) {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('event_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status',
      'd.last_error',
      'd.subscription_id',
      's.url',
      'e.id as event_id',
      'e.category',
      'd.created_at',
    ])
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(filters.limit);
  if (filters.subscriptionId) query = query.where('d.subscription_id', '=', filters.subscriptionId);
  if (filters.status) query = query.where('d.status', '=', filters.status as 'pending');
  if (filters.scope)
    query = query.where('s.organization_id', '=', filters.scope.organizationId).where('s.environment', '=', filters.scope.environment);
  return (await query.execute()).map((d) => ({
    ...d,
    next_attempt_at: d.next_attempt_at.toISOString(),
    last_attempt_at: d.last_attempt_at?.toISOString() ?? null,
    created_at: d.created_at.toISOString(),
  }));
}

/** Sends a delivery (of `scope` when given) again at the next dispatcher pass, with a fresh set of attempts. */
export async function replayDelivery(db: Executor, id: string, scope?: DeliveryScope) {
  let query = db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: new Date(), locked_until: null })
    .where('id', '=', id);
  if (scope) {
    query = query.where('subscription_id', 'in', (eb) =>
      eb
        .selectFrom('event_subscriptions')
        .select('id')
        .where('organization_id', '=', scope.organizationId)
        .where('environment', '=', scope.environment),
    );
  }
  const row = await query.returning(['id', 'status', 'subscription_id', 'event_id']).executeTakeFirst();
  if (!row) throw notFound(`no delivery ${id}`);
  return row;
}
