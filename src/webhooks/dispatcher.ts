import { setMaxListeners } from 'node:events';
import { Webhook } from 'standardwebhooks';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { SecretBox } from '../keys/secret-box.js';
import type { Logger } from '../logging/logger.js';
import {
  claimDueDeliveries,
  markFailed,
  markInterrupted,
  markSkipped,
  markSucceeded,
  type ClaimedDelivery,
  type Pause,
} from './deliveries-repository.js';
import { postJson, type Resolver, type SendResult } from './send.js';
import type { Profile } from './targets.js';

export const ATTENTION_AFTER_MS = 5 * 86_400_000;

export interface DispatcherOptions {
  db: Db;
  /** Opens the subscriptions' signing secrets, stored sealed. */
  box: SecretBox;
  logger?: Logger;
  /** Delays between attempts (seconds): attempts = 1 + delays.length. */
  retrySeconds: readonly number[];
  /** The deadline of one whole attempt (connect, headers, body). */
  timeoutMs: number;
  profile: Profile;
  /** The clock; injectable so tests can walk the backoff schedule. */
  now?: () => Date;
  /** At most this many deliveries per claim (default: as many as there are free slots). */
  batchSize?: number;
  /** Attempts in flight at once, each on its own connection. */
  concurrency?: number;
  /** Name resolution for production deliveries (injectable so tests need no DNS). */
  resolve?: Resolver;
  /**
   * Attempts in flight at once for one organization, in every dispatcher together (the server
   * passes webhook_in_flight_per_organization); unset, the pool (`concurrency`) is the only bound.
   */
  perOrganization?: number;
  /** Attempts in flight at once for one subscription, likewise (webhook_in_flight_per_subscription). */
  perSubscription?: number;
  /** Failed attempts in a row that pause a subscription (status requires_attention). */
  pauseAfterFailures?: number;
  /** Told the outcome of every claimed delivery (the metrics count them). */
  onOutcome?: (outcome: DeliveryOutcome) => void;
}

export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_PAUSE_AFTER_FAILURES = 50;

/** What became of a claimed delivery: one label of almoner_webhook_attempts_total. */
export const DELIVERY_OUTCOMES = ['succeeded', 'http_error', 'timeout', 'connection_error', 'refused', 'interrupted', 'skipped'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

function outcomeOf(result: SendResult): DeliveryOutcome {
  if (result.ok) return 'succeeded';
  if (result.interrupted) return 'interrupted';
  return result.failure ?? (result.status === undefined ? 'connection_error' : 'http_error');
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
  return {
    body,
    headers: {
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

/** The audit row of a pause, in the organization's trail (docs/api.md, "Donor-advised-fund APIs, events and webhooks"). */
function recordPause(trx: Parameters<typeof recordAudit>[0], delivery: ClaimedDelivery, pause: Pause): Promise<void> {
  return recordAudit(trx, {
    event: 'webhook.paused',
    organizationId: delivery.organization_id,
    environment: delivery.environment,
    details: {
      subscription: delivery.subscription_id,
      url: delivery.url,
      reason: pause.reason,
      failures_in_a_row: pause.consecutiveFailures,
      failing_since: pause.failingSince.toISOString(),
    },
  });
}

/** How long a claim is leased beyond the attempt's own deadline, before another dispatcher may take it over. */
export const LEASE_SLACK_SECONDS = 30;

export function leaseSecondsFor(timeoutMs: number): number {
  return Math.ceil(timeoutMs / 1000) + LEASE_SLACK_SECONDS;
}

/**
 * Delivers queued webhook attempts: claims due rows (safe with several dispatchers), POSTs
 * them, records the outcome, and schedules retries with the configured backoff until the
 * attempts are used up.
 *
 * Attempts run independently in a pool of `concurrency` slots: a slow or stalling receiver
 * holds one slot until its attempt's deadline, never the others, and a slot that frees is
 * filled at once when more deliveries were due. No organization holds more than
 * `perOrganization` slots nor a subscription more than `perSubscription` (counted over every
 * dispatcher), and free slots go round the organizations (deliveries-repository.ts), so one
 * tenant's silent receivers cannot starve another's deliveries; a subscription failing
 * `pauseAfterFailures` attempts in a row is paused, with an audit row, until resumed
 * (docs/security.md, "One tenant's webhooks starving the others"). Stopping waits for
 * attempts in flight up to the grace it is given, then aborts the rest and gives them back,
 * still due.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  /** Claims are made one at a time, so free slots are never over-filled. */
  private claiming: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  /** The last claim filled every slot it asked for: more may be due right now. */
  private backlog = false;
  private stopping = false;
  /** Aborts every attempt in flight when the shutdown grace runs out. */
  private readonly aborter = new AbortController();

  constructor(private readonly options: DispatcherOptions) {
    // One abort listener per attempt in flight, at most `concurrency` of them.
    setMaxListeners(this.concurrency + 1, this.aborter.signal);
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private get concurrency(): number {
    return this.options.concurrency ?? DEFAULT_CONCURRENCY;
  }

  /** Attempts in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Claims due deliveries for the free slots and starts them; resolves once they are started (with their completions). */
  private fill(): Promise<Promise<void>[]> {
    const run = this.claiming.then(async () => {
      const free = Math.min(this.concurrency - this.inFlight.size, this.options.batchSize ?? Number.POSITIVE_INFINITY);
      if (free <= 0 || this.stopping) return [];
      const now = this.now();
      const claimed = await claimDueDeliveries(this.options.db, now, free, leaseSecondsFor(this.options.timeoutMs), {
        perOrganization: this.options.perOrganization ?? this.concurrency,
        perSubscription: this.options.perSubscription ?? this.concurrency,
      });
      this.backlog = claimed.length === free;
      if (this.stopping) {
        await Promise.all(claimed.map((delivery) => markInterrupted(this.options.db, delivery)));
        return [];
      }
      return claimed.map((delivery) => this.launch(delivery, now));
    });
    this.claiming = run.catch(() => undefined);
    return run;
  }

  private launch(delivery: ClaimedDelivery, now: Date): Promise<void> {
    const done: Promise<void> = this.attempt(delivery, now)
      .catch((error: Error) => this.options.logger?.warn({ delivery: delivery.id, err: error }, 'webhook delivery could not be recorded'))
      .finally(() => {
        this.inFlight.delete(done);
        // A slot freed: take the next due delivery now rather than at the next tick.
        if (this.timer && this.backlog && !this.stopping) this.tick();
      });
    this.inFlight.add(done);
    return done;
  }

  private async attempt(delivery: ClaimedDelivery, now: Date): Promise<void> {
    const { db } = this.options;
    if (delivery.subscription_status !== 'active') {
      this.options.onOutcome?.('skipped');
      return markSkipped(db, delivery, `subscription ${delivery.subscription_status}`);
    }
    const { body, headers } = signedRequest(delivery, now, this.options.box);
    const result = await postJson(delivery.url, body, headers, {
      timeoutMs: this.options.timeoutMs,
      profile: this.options.profile,
      signal: this.aborter.signal,
      resolve: this.options.resolve,
    });
    this.options.onOutcome?.(outcomeOf(result));
    if (result.interrupted) return markInterrupted(db, delivery, result.error);
    if (result.ok) return markSucceeded(db, delivery, result.status!, now);
    const delays = this.options.retrySeconds;
    const delay = delays[delivery.attempts - 1];
    this.options.logger?.warn(
      { delivery: delivery.id, attempt: delivery.attempts, status: result.status, error: result.error },
      'webhook delivery failed',
    );
    const pause = await inTransaction(db, async (trx) => {
      const paused = await markFailed(trx, delivery, { status: result.status, error: result.error ?? 'failed' }, now, {
        retryAt: delay === undefined ? undefined : new Date(now.getTime() + delay * 1000),
        attentionAfterMs: ATTENTION_AFTER_MS,
        pauseAfterFailures: this.options.pauseAfterFailures ?? DEFAULT_PAUSE_AFTER_FAILURES,
      });
      if (paused) await recordPause(trx, delivery, paused);
      return paused;
    });
    if (pause)
      this.options.logger?.warn(
        {
          subscription: delivery.subscription_id,
          organization: delivery.organization_id,
          reason: pause.reason,
          failures: pause.consecutiveFailures,
        },
        'webhook subscription paused',
      );
  }

  private tick(): void {
    this.fill().catch((error: Error) => this.options.logger?.warn({ err: error }, 'webhook dispatch failed'));
  }

  /** One pass: claims what is due (up to the free slots), delivers it, and resolves when those attempts are recorded. */
  async runOnce(): Promise<number> {
    const started = await this.fill();
    await Promise.all(started);
    return started.length;
  }

  /** Polls every `pollMs`; a poll never waits for earlier attempts, only for free slots. */
  start(pollMs: number): void {
    this.timer = setInterval(() => this.tick(), pollMs);
    this.timer.unref();
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to `graceMs`, then aborts the rest
   * (they are given back, still due, for the next dispatcher) and waits for that to be recorded.
   */
  async stop(graceMs = 0): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    await this.claiming;
    if (this.inFlight.size === 0) return;
    const pending = Promise.all(this.inFlight);
    const deadline = setTimeout(() => this.aborter.abort(), graceMs);
    try {
      await pending;
    } finally {
      clearTimeout(deadline);
    }
  }
}
