import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/** The outbox's three statements; outbox.ts's emitEvent runs them in the caller's transaction. */

export async function insertEvent(
  db: Executor,
  values: {
    id: string;
    environment: Environment;
    organization_id: string;
    category: string;
    associated_object_id: string;
    associated_object_type: string;
  },
): Promise<void> {
  await db.insertInto('events').values(values).execute();
}

/** The active subscriptions an event of this category goes to. */
export function listActiveSubscriptionIds(db: Executor, scope: { environment: Environment; organizationId: string }, category: string) {
  return db
    .selectFrom('event_subscriptions')
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('category', '=', category)
    .where('status', '=', 'active')
    .execute();
}

export async function insertDeliveries(
  db: Executor,
  rows: { id: string; environment: Environment; subscription_id: string; event_id: string; next_attempt_at: Date }[],
): Promise<void> {
  await db.insertInto('webhook_deliveries').values(rows).execute();
}
