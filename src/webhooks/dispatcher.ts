import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../db/secret-box.js';
import type { Logger } from '../logging/logger.js';
import { claimDueDeliveries, markFailed, markSkipped, markSucceeded, type ClaimedDelivery } from './deliveries-repository.js';
import { postJson } from './send.js';
import type { Profile } from './targets.js';

export const ATTENTION_AFTER_MS = 5 * 86_400_000;

export interface DispatcherOptions {
  db: Db;
  /** Opens the subscriptions' signing secrets, stored sealed. */
  box: SecretBox;
  logger?: Logger;
  /** Delays between attempts (seconds): attempts = 1 + delays.length. */
  retrySeconds: readonly number[];
  timeoutMs: number;
  profile: Profile;
  /** The clock; injectable so tests can walk the backoff schedule. */
  now?: () => Date;
  batchSize?: number;
}

/** The thin Event body, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). */
export function signedRequest(delivery: ClaimedDelivery, now: Date, box: SecretBox) {
  const body = JSON.stringify({
    id: delivery.event_id,
    category: delivery.category,
    created_at: delivery.event_created_at.toISOString(),
    associated_object_id: delivery.associated_object_id,
    associated_object_type: delivery.associated_object_type,
  });
  const signature = new Webhook(box.open(delivery.signing_secret)).sign(delivery.event_id, now, body);
  return { body, headers: { 'webhook-id': delivery.event_id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature } };
}

/**
 * Delivers queued webhook attempts: claims due rows (safe with several dispatchers),
 * POSTs them with a timeout, records the outcome, and schedules retries with the
 * configured backoff until the attempts are used up.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly options: DispatcherOptions) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  async runOnce(): Promise<number> {
    const { db } = this.options;
    const now = this.now();
    const claimed = await claimDueDeliveries(db, now, this.options.batchSize ?? 20);
    await Promise.all(
      claimed.map(async (delivery) => {
        if (delivery.subscription_status !== 'active') return markSkipped(db, delivery, `subscription ${delivery.subscription_status}`);
        const { body, headers } = signedRequest(delivery, now, this.options.box);
        const result = await postJson(delivery.url, body, headers, { timeoutMs: this.options.timeoutMs, profile: this.options.profile });
        if (result.ok) return markSucceeded(db, delivery, result.status!, now);
        const delays = this.options.retrySeconds;
        const delay = delays[delivery.attempts - 1];
        this.options.logger?.warn({ delivery: delivery.id, attempt: delivery.attempts, status: result.status, error: result.error }, 'webhook delivery failed');
        return markFailed(db, delivery, { status: result.status, error: result.error ?? 'failed' }, now, {
          retryAt: delay === undefined ? undefined : new Date(now.getTime() + delay * 1000),
          attentionAfterMs: ATTENTION_AFTER_MS,
        });
      }),
    );
    return claimed.length;
  }

  start(pollMs: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.runOnce()
        .catch((error: Error) => {
          this.options.logger?.warn({ err: { message: error.message } }, 'webhook dispatch failed');
          return 0;
        })
        .finally(() => {
          this.running = undefined;
        });
    }, pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
