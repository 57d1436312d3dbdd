import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  /** This claim's lease; with `attempts`, it fences the outcome to the claim that made it. */
  locked_until: Date;
  subscription_id: string;
  url: string;
  signing_secret: string;
  subscription_status: string;
  event_id: string;
  category: string;
  event_created_at: Date;
  associated_object_id: string;
  associated_object_type: string;
}

/**
 * Claims due deliveries for this dispatcher: FOR UPDATE SKIP LOCKED means two dispatchers
 * (in one process or several) never take the same row, and the lease (locked_until) keeps a
 * crashed dispatcher's claim from blocking the delivery for longer than the lease. The lease
 * outlasts the attempt's own deadline, so a live dispatcher's claim is never taken over.
 */
export async function claimDueDeliveries(db: Db, now: Date, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`
    with claimed as (
      update webhook_deliveries d
      set locked_until = ${now}::timestamptz + make_interval(secs => ${leaseSeconds}), attempts = d.attempts + 1, last_attempt_at = ${now}
      where d.id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until <= ${now})
        order by next_attempt_at
        limit ${limit}
        for update skip locked)
      returning d.*
    )
    select c.id, c.attempts, c.locked_until, c.subscription_id, s.url, s.signing_secret, s.status as subscription_status,
           e.id as event_id, e.category, e.created_at as event_created_at, e.associated_object_id, e.associated_object_type
    from claimed c
    join event_subscriptions s on s.id = c.subscription_id
    join events e on e.id = c.event_id`.execute(db);
  return rows;
}

/**
 * Only the claim that is still current may record its outcome: if its lease ran out and
 * another dispatcher (or a replay) took the row meanwhile, the late result is dropped.
 */
function stillOurs(delivery: ClaimedDelivery) {
  return (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
    eb.and([eb('id', '=', delivery.id), eb('attempts', '=', delivery.attempts), eb('locked_until', '=', delivery.locked_until)]);
}

export async function markSucceeded(db: Db, delivery: ClaimedDelivery, status: number, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('webhook_deliveries').set({ status: 'succeeded', last_status: status, last_error: null, locked_until: null }).where(stillOurs(delivery)).executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    await trx.updateTable('event_subscriptions').set({ last_success_at: now, failing_since: null }).where('id', '=', delivery.subscription_id).execute();
  });
}

export interface FailureOutcome {
  /** When to try again; undefined when the attempts are used up. */
  retryAt?: Date;
  /** The subscription has failed long enough to need attention. */
  attentionAfterMs: number;
}

export async function markFailed(db: Db, delivery: ClaimedDelivery, result: { status?: number; error: string }, now: Date, outcome: FailureOutcome): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.retryAt ? 'pending' : 'failed',
        next_attempt_at: outcome.retryAt ?? now,
        locked_until: null,
        last_status: result.status ?? null,
        last_error: result.error.slice(0, 500),
      })
      .where(stillOurs(delivery))
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    const subscription = await trx.updateTable('event_subscriptions').set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql<Date>`${now}::timestamptz`) })).where('id', '=', delivery.subscription_id).returning(['failing_since', 'last_success_at', 'status']).executeTakeFirst();
    const since = subscription?.failing_since?.getTime() ?? now.getTime();
    const lastSuccess = subscription?.last_success_at?.getTime() ?? 0;
    if (subscription?.status === 'active' && now.getTime() - since >= outcome.attentionAfterMs && now.getTime() - lastSuccess >= outcome.attentionAfterMs) {
      await trx.updateTable('event_subscriptions').set({ status: 'requires_attention', updated_at: now }).where('id', '=', delivery.subscription_id).execute();
    }
  });
}

/** A delivery whose subscription is no longer active is dropped without an attempt. */
export async function markSkipped(db: Db, delivery: ClaimedDelivery, reason: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ status: 'failed', locked_until: null, last_error: reason, attempts: delivery.attempts - 1 }).where(stillOurs(delivery)).execute();
}

/**
 * Gives a claim back without counting it, still due: the server shut down before the attempt
 * started, or cut it short at the end of the shutdown grace. The receiver may or may not have
 * seen it; delivery is at least once, so the next dispatcher sends it again (same webhook-id).
 * An interrupted attempt is recorded in last_error; the attempt is not held against the
 * delivery's limit, since the receiver did not cause it.
 */
export async function markInterrupted(db: Db, delivery: ClaimedDelivery, reason?: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', locked_until: null, attempts: delivery.attempts - 1, ...(reason ? { last_error: reason } : {}) })
    .where(stillOurs(delivery))
    .execute();
}

export interface BacklogRow {
  environment: string;
  /** Deliveries not yet succeeded or given up on. */
  pending: number;
  /** Seconds since the most overdue pending delivery fell due (0 when none is due). */
  lag: number;
}

/**
 * The outbox backlog per environment, for the metrics scrape: one query over the pending
 * deliveries' partial index, under a statement timeout of its own (`timeoutMs`).
 */
export async function readOutboxBacklog(db: Db, timeoutMs: number): Promise<BacklogRow[]> {
  return db.transaction().execute(async (trx) => {
    await sql`set local statement_timeout = ${sql.lit(timeoutMs)}`.execute(trx);
    const { rows } = await sql<BacklogRow>`
      select environment,
             count(*)::int as pending,
             greatest(extract(epoch from now() - min(next_attempt_at)), 0)::float8 as lag
        from webhook_deliveries
       where status = 'pending'
       group by environment`.execute(trx);
    return rows;
  });
}
