import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import type { Database, Environment } from '../db/schema.js';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  /** This claim's lease; with `attempts`, it fences the outcome to the claim that made it. */
  locked_until: Date;
  subscription_id: string;
  url: string;
  signing_secret: string;
  subscription_status: string;
  organization_id: string;
  environment: Environment;
  event_id: string;
  category: string;
  event_created_at: Date;
  associated_object_id: string;
  associated_object_type: string;
}

/** At most this many attempts in flight at once, per organization and per subscription (docs/security.md, "One tenant's webhooks starving the others"). */
export interface InFlightCaps {
  perOrganization: number;
  perSubscription: number;
}

/**
 * Claims due deliveries for this dispatcher, in order and fairly: a delivery waits while one of
 * an earlier event (by seq) of the same object to the same URL is pending, so one object's
 * webhooks arrive at a receiver in the order of its transitions, a failed attempt's retries
 * included (docs/api.md, "Webhooks"); and no organization has more than
 * `caps.perOrganization` attempts in flight at once (in every dispatcher together), no
 * subscription more than `caps.perSubscription`, and the free slots go round the organizations
 * (each one's oldest due delivery first, then each one's second…) and, inside one, round its
 * subscriptions, rather than to whoever queued the most.
 *
 * Claims are serialised by a transaction-level advisory lock, so two dispatchers (in one
 * process or several) never count the same free room twice, and FOR UPDATE SKIP LOCKED leaves
 * out a row an outcome or a replay is writing. The lease (locked_until) keeps a crashed
 * dispatcher's claim from blocking the delivery for longer than the lease; it outlasts the
 * attempt's own deadline, so a live dispatcher's claim is never taken over.
 */
export async function claimDueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  leaseSeconds: number,
  caps: InFlightCaps,
): Promise<ClaimedDelivery[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('almoner:webhook_claim'))`.execute(trx);
    const { rows } = await sql<ClaimedDelivery>`
      with in_flight as (
        select d.subscription_id, s.organization_id
          from webhook_deliveries d join event_subscriptions s on s.id = d.subscription_id
         where d.status = 'pending' and d.locked_until is not null and d.locked_until > ${now}
      ),
      org_busy as (select organization_id, count(*)::int as n from in_flight group by organization_id),
      sub_busy as (select subscription_id, count(*)::int as n from in_flight group by subscription_id),
      due as (
        select d.id, d.subscription_id, s.organization_id, d.next_attempt_at,
               row_number() over (partition by d.subscription_id order by d.next_attempt_at, d.id) as sub_rank
          from webhook_deliveries d join event_subscriptions s on s.id = d.subscription_id join events e on e.id = d.event_id
         where d.status = 'pending' and d.next_attempt_at <= ${now} and (d.locked_until is null or d.locked_until <= ${now})
           -- One object's webhooks in the order of its transitions: none is sent while a delivery
           -- of an earlier event of the same object to the same URL is pending (in flight or to be
           -- retried), whichever of the organization's subscriptions (one per category) it is of.
           and not exists (
             select 1 from events pe
               join webhook_deliveries p on p.event_id = pe.id and p.status = 'pending'
               join event_subscriptions ps on ps.id = p.subscription_id
              where pe.associated_object_id = e.associated_object_id and pe.associated_object_type = e.associated_object_type
                and pe.seq < e.seq
                and ps.url = s.url and ps.organization_id = s.organization_id and ps.environment = s.environment)
      ),
      within_subscription as (
        select due.* from due left join sub_busy b on b.subscription_id = due.subscription_id
         where due.sub_rank + coalesce(b.n, 0) <= ${caps.perSubscription}
      ),
      ranked as (
        select w.*, row_number() over (partition by w.organization_id order by w.sub_rank, w.next_attempt_at, w.id) as org_rank
          from within_subscription w
      ),
      chosen as (
        select r.id from ranked r left join org_busy b on b.organization_id = r.organization_id
         where r.org_rank + coalesce(b.n, 0) <= ${caps.perOrganization}
         order by r.org_rank, r.next_attempt_at, r.id
         limit ${limit}
      ),
      -- Still due when locked: a row an outcome or a replay changed meanwhile is re-checked here.
      locked as (
        select id from webhook_deliveries
         where id in (select id from chosen)
           and status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until <= ${now})
           for update skip locked
      ),
      claimed as (
        update webhook_deliveries d
           set locked_until = ${now}::timestamptz + make_interval(secs => ${leaseSeconds}), attempts = d.attempts + 1, last_attempt_at = ${now}
         where d.id in (select id from locked)
        returning d.*
      )
      select c.id, c.environment, c.attempts, c.locked_until, c.subscription_id, s.url, s.signing_secret, s.status as subscription_status, s.organization_id,
             e.id as event_id, e.category, e.created_at as event_created_at, e.associated_object_id, e.associated_object_type
        from claimed c
        join event_subscriptions s on s.id = c.subscription_id
        join events e on e.id = c.event_id`.execute(trx);
    return rows;
  });
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
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'succeeded', last_status: status, last_error: null, locked_until: null })
      .where(stillOurs(delivery))
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) return;
    await trx
      .updateTable('event_subscriptions')
      .set({ last_success_at: now, failing_since: null, consecutive_failures: 0 })
      .where('id', '=', delivery.subscription_id)
      .execute();
  });
}

export interface FailureOutcome {
  /** When to try again; undefined when the attempts are used up. */
  retryAt?: Date;
  /** The subscription has failed long enough to need attention. */
  attentionAfterMs: number;
  /** The subscription has failed this many attempts in a row: it is paused. */
  pauseAfterFailures: number;
}

/** Why a failure paused its subscription (status requires_attention), when it did. */
export interface Pause {
  reason: 'failures_in_a_row' | 'failing_for_days';
  consecutiveFailures: number;
  failingSince: Date;
}

/**
 * Records a failed attempt (in the caller's transaction, with whatever the pause records) and
 * pauses the subscription when it has failed `pauseAfterFailures` attempts in a row, or for
 * `attentionAfterMs` without a success. Returns the pause, or undefined.
 */
export async function markFailed(
  trx: Executor,
  delivery: ClaimedDelivery,
  result: { status?: number; error: string },
  now: Date,
  outcome: FailureOutcome,
): Promise<Pause | undefined> {
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
  if (updated.numUpdatedRows === 0n) return undefined;
  const subscription = await trx
    .updateTable('event_subscriptions')
    .set((eb) => ({
      failing_since: eb.fn.coalesce('failing_since', sql<Date>`${now}::timestamptz`),
      consecutive_failures: sql<number>`consecutive_failures + 1`,
    }))
    .where('id', '=', delivery.subscription_id)
    .returning(['failing_since', 'last_success_at', 'status', 'consecutive_failures'])
    .executeTakeFirst();
  if (subscription?.status !== 'active') return undefined;
  const since = subscription.failing_since ?? now;
  const lastSuccess = subscription.last_success_at?.getTime() ?? 0;
  const reason =
    subscription.consecutive_failures >= outcome.pauseAfterFailures
      ? 'failures_in_a_row'
      : now.getTime() - since.getTime() >= outcome.attentionAfterMs && now.getTime() - lastSuccess >= outcome.attentionAfterMs
        ? 'failing_for_days'
        : undefined;
  if (!reason) return undefined;
  // Only the failure that flips it from active records the pause.
  const paused = await trx
    .updateTable('event_subscriptions')
    .set({ status: 'requires_attention', updated_at: now })
    .where('id', '=', delivery.subscription_id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return paused.numUpdatedRows === 0n ? undefined : { reason, consecutiveFailures: subscription.consecutive_failures, failingSince: since };
}

/** A delivery whose subscription is no longer active is dropped without an attempt. */
export async function markSkipped(db: Db, delivery: ClaimedDelivery, reason: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', locked_until: null, last_error: reason, attempts: delivery.attempts - 1 })
    .where(stillOurs(delivery))
    .execute();
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
