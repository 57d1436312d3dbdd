import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { prefixedId } from '../db/ids.js';
import { insertDeliveries, insertEvent, listActiveSubscriptionIds } from './outbox-repository.js';

export type EventCategory =
  | 'grant.created'
  | 'grant.updated'
  | 'unintegrated_grant.created'
  | 'unintegrated_grant.updated'
  | 'donor_account.created'
  | 'donor_account.updated'
  | 'authorization_token.created'
  | 'authorization_token.updated'
  | 'grant_request.created'
  | 'grant_request.updated'
  | 'disbursement.created'
  | 'disbursement.updated'
  | 'inbound_transfer.created'
  | 'inbound_transfer.updated'
  | 'verification_request.created'
  | 'verification_request.updated'
  | 'donation.created'
  | 'donation.updated'
  | 'deposit.created'
  | 'deposit.updated';

export interface NewEvent {
  environment: Environment;
  organizationId: string;
  category: EventCategory;
  objectId: string;
  objectType:
    | 'grant'
    | 'unintegrated_grant'
    | 'donor_account'
    | 'authorization_token'
    | 'grant_request'
    | 'disbursement'
    | 'inbound_transfer'
    | 'verification_request'
    | 'donation'
    | 'deposit';
}

/**
 * Records an event and queues one delivery per matching active subscription. Call it with
 * the transaction that makes the change: a rolled-back change leaves no event and no
 * delivery (the outbox pattern); the dispatcher only ever sees committed rows.
 */
export async function emitEvent(trx: Executor, event: NewEvent): Promise<string> {
  const id = prefixedId('evt');
  await insertEvent(trx, {
    id,
    environment: event.environment,
    organization_id: event.organizationId,
    category: event.category,
    associated_object_id: event.objectId,
    associated_object_type: event.objectType,
  });
  const subscriptions = await listActiveSubscriptionIds(trx, event, event.category);
  if (subscriptions.length > 0) {
    await insertDeliveries(
      trx,
      subscriptions.map((s) => ({
        id: prefixedId('whd'),
        environment: event.environment,
        subscription_id: s.id,
        event_id: id,
        next_attempt_at: new Date(),
      })),
    );
  }
  return id;
}
