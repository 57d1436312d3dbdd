import type { Executor } from '../accounts/repository.js';
import type { Environment } from '../db/schema.js';
import { prefixedId } from '../db/ids.js';

export type EventCategory =
  | 'donor_account.created'
  | 'donor_account.updated'
  | 'authorization_token.created'
  | 'authorization_token.updated'
  | 'grant_request.created'
  | 'grant_request.updated';

export interface NewEvent {
  environment: Environment;
  organizationId: string;
  category: EventCategory;
  objectId: string;
  objectType: 'donor_account' | 'authorization_token' | 'grant_request';
}

/**
 * Records an event and queues one delivery per matching active subscription. Call it with
 * the transaction that makes the change: a rolled-back change leaves no event and no
 * delivery (the outbox pattern); the dispatcher only ever sees committed rows.
 */
export async function emitEvent(trx: Executor, event: NewEvent): Promise<string> {
  const id = prefixedId('evt');
  await trx
    .insertInto('events')
    .values({ id, environment: event.environment, organization_id: event.organizationId, category: event.category, associated_object_id: event.objectId, associated_object_type: event.objectType })
    .execute();
  const subscriptions = await trx
    .selectFrom('event_subscriptions')
    .select('id')
    .where('organization_id', '=', event.organizationId)
    .where('environment', '=', event.environment)
    .where('category', '=', event.category)
    .where('status', '=', 'active')
    .execute();
  if (subscriptions.length > 0) {
    await trx
      .insertInto('webhook_deliveries')
      .values(subscriptions.map((s) => ({ id: prefixedId('whd'), environment: event.environment, subscription_id: s.id, event_id: id, next_attempt_at: new Date() })))
      .execute();
  }
  return id;
}
