import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { listDeliveries, replayDelivery as queueAgain } from '../webhooks/admin-repository.js';
import type { SubscriptionActor } from './actor.js';
import { findSubscriptionById } from './repository.js';
import { recordWebhookChange, type SubscriptionScope } from './subscriptions-service.js';

/**
 * Sends a delivery (of `scope`, the dashboard's organization and environment; any, the maker's
 * CLI) again at the next dispatcher pass with a fresh set of attempts, and audits it in the same
 * transaction, naming who asked (docs/accounts.md, "Organization pages"). Anything else is 404.
 */
export async function replayDelivery(
  db: Db,
  id: string,
  scope: SubscriptionScope | undefined,
  actor: SubscriptionActor,
): Promise<{ id: string; status: string }> {
  return inTransaction(db, async (trx) => {
    const replayed = await queueAgain(trx, id, scope);
    const subscription = (await findSubscriptionById(trx, replayed.subscription_id))!;
    await recordWebhookChange(trx, 'webhook.replayed', subscription, actor, { delivery: replayed.id, event: replayed.event_id });
    return { id: replayed.id, status: replayed.status };
  });
}

/** An organization's most recent deliveries in one environment, for the webhooks page. */
export function recentDeliveries(db: Db, scope: SubscriptionScope, limit: number) {
  return listDeliveries(db, { limit, scope });
}
