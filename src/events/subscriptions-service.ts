import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { SecretBox } from '../keys/secret-box.js';
import type { SubscriptionStatus } from '../db/schema-events.js';
import { recordAudit } from '../audit/audit-log.js';
import type { AuditEventKind } from '../audit/event-kinds.js';
import { prefixedId } from '../db/ids.js';
import { invalid, notFound } from '../errors/domain-error.js';
import { generateSigningSecret, isValidSigningSecret } from '../webhooks/signing-secret.js';
import { targetProblem, type Profile } from '../webhooks/targets.js';
import { auditActor, type SubscriptionActor } from './actor.js';
import type { Cursor } from '../db/keyset.js';
import {
  countSubscriptions,
  findSameSubscription,
  findSubscription,
  insertSubscription,
  lockSubscription,
  listSubscriptions,
  lockSubscriptionsOf,
  setSubscriptionStatus,
  type SubscriptionRow,
} from './repository.js';

/**
 * Event subscriptions, for the API (POST/PATCH /v1/event_subscriptions) and the dashboard's
 * webhooks page alike: where a webhook may be sent (webhooks/targets.ts), its signing secret
 * (given, or generated and returned once), sealed at rest; at most
 * SUBSCRIPTIONS_PER_ORGANIZATION per organization and environment, and one per URL and
 * category (docs/api.md, "Donor-advised-fund APIs, events and webhooks"). Every change writes
 * its audit row, naming who made it, in the transaction that makes it, whichever surface asked
 * (docs/accounts.md, "Organization pages").
 */
export interface SubscriptionScope {
  environment: Environment;
  organizationId: string;
}

export interface SubscriptionDeps {
  db: Db;
  box: SecretBox;
  /** The dev profile allows http URLs on loopback; production only https to public addresses. */
  profile: Profile;
}

export type { SubscriptionRow };

/** A page of an organization's subscriptions of `categories`, deleted ones included, newest first. */
export function subscriptionsPage(
  db: Db,
  scope: SubscriptionScope,
  categories: readonly string[],
  cursor: Cursor | undefined,
  limit: number,
): Promise<SubscriptionRow[]> {
  return listSubscriptions(db, scope, categories, cursor, limit);
}

/** One of an organization's subscriptions, or undefined. */
export function subscriptionOf(db: Db, scope: SubscriptionScope, id: string): Promise<SubscriptionRow | undefined> {
  return findSubscription(db, scope, id);
}

/** Subscriptions (not deleted) one organization may have in each environment. */
export const SUBSCRIPTIONS_PER_ORGANIZATION = 20;

export interface Subscribed {
  row: SubscriptionRow;
  /** The secret generated for a new subscription, shown once. */
  generatedSecret?: string;
  /** The subscription to this URL and category existed already: it is the one answered. */
  existing?: boolean;
}

/** The audit row of a change to `row`, by `actor`, with `details` beside the subscription's id and URL. */
export function recordWebhookChange(
  trx: Executor,
  event: AuditEventKind,
  row: SubscriptionRow,
  actor: SubscriptionActor,
  details: Record<string, unknown> = {},
): Promise<void> {
  const { via, ...who } = auditActor(actor);
  return recordAudit(trx, {
    event,
    environment: row.environment,
    organizationId: row.organization_id,
    ...who,
    details: { subscription: row.id, url: row.url, ...details, ...via },
  });
}

export async function subscribe(
  deps: SubscriptionDeps,
  scope: SubscriptionScope,
  input: { url: string; category: string; signingSecret?: string },
  actor: SubscriptionActor,
): Promise<Subscribed> {
  const problem = targetProblem(input.url, deps.profile);
  if (problem) throw invalid(`${problem}.`);
  // One spelling per URL (host case, default port, dot segments), so a duplicate is seen as one.
  const url = new URL(input.url).href;
  if (url.length > 2048) throw invalid('url must be at most 2048 characters.');
  if (input.signingSecret !== undefined && !isValidSigningSecret(input.signingSecret))
    throw invalid('signing_secret must be a Standard Webhooks secret: whsec_ followed by the base64 of 24 to 64 random bytes.');
  return inTransaction(deps.db, async (trx) => {
    await lockSubscriptionsOf(trx, scope);
    const same = await findSameSubscription(trx, scope, url, input.category);
    if (same) {
      // The same subscription again (a retried create): the one that exists, never a second
      // sender of every event. Its secret was shown when it was made and is not shown again.
      if (input.signingSecret !== undefined && deps.box.open(same.signing_secret) !== input.signingSecret) {
        throw invalid(
          `A subscription to this url and category exists already (${same.id}) with another signing secret; delete it first to subscribe with this one.`,
        );
      }
      return { row: same, existing: true };
    }
    if ((await countSubscriptions(trx, scope)) >= SUBSCRIPTIONS_PER_ORGANIZATION) {
      throw invalid(
        `Your organization has ${SUBSCRIPTIONS_PER_ORGANIZATION} event subscriptions in ${scope.environment}, the most allowed; delete one to add another.`,
      );
    }
    const generatedSecret = input.signingSecret === undefined ? generateSigningSecret() : undefined;
    const row = await insertSubscription(trx, {
      id: prefixedId('evtsub'),
      environment: scope.environment,
      organization_id: scope.organizationId,
      url,
      category: input.category,
      signing_secret: deps.box.seal(input.signingSecret ?? generatedSecret!),
    });
    await recordWebhookChange(trx, 'webhook.added', row, actor, { category: row.category });
    return { row, generatedSecret };
  });
}

/** The audit event of each status a subscription is changed to (a resume from requires_attention is webhook.resumed). */
const STATUS_EVENTS = { active: 'webhook.enabled', disabled: 'webhook.disabled', deleted: 'webhook.deleted' } as const;

/**
 * Activates, disables or deletes a subscription of the scope; a deleted one stays deleted.
 * Activating a paused one (requires_attention) resumes it. Each change is audited; asking for
 * the status it has changes nothing and writes nothing.
 */
export async function changeSubscriptionStatus(
  db: Db,
  scope: SubscriptionScope,
  id: string,
  status: Exclude<SubscriptionStatus, 'requires_attention'>,
  actor: SubscriptionActor,
): Promise<SubscriptionRow> {
  return inTransaction(db, async (trx) => {
    const row = await lockSubscription(trx, scope, id);
    if (!row) throw notFound('The event subscription was not found.');
    if (status === row.status) return row;
    if (row.status === 'deleted') throw invalid('A deleted subscription cannot be changed.');
    const changed = await setSubscriptionStatus(trx, row.id, status);
    const event = row.status === 'requires_attention' && status === 'active' ? 'webhook.resumed' : STATUS_EVENTS[status];
    await recordWebhookChange(trx, event, row, actor, { previous_status: row.status });
    return changed;
  });
}

/**
 * Resumes a subscription the dispatcher paused (requires_attention) after repeated failures:
 * active again, its count of failures in a row back to 0, and an audit row naming who resumed
 * it. Events raised while it was paused were not queued for it; `webhooks replay` sends a past
 * delivery again.
 */
export async function resumeSubscription(
  db: Db,
  id: string,
  scope: SubscriptionScope | undefined,
  actor: SubscriptionActor,
): Promise<SubscriptionRow> {
  return inTransaction(db, async (trx) => {
    const row = await lockSubscription(trx, scope, id);
    if (!row) throw notFound('The event subscription was not found.');
    if (row.status !== 'requires_attention')
      throw invalid(`The subscription is ${row.status}, not paused: only a paused subscription (requires_attention) is resumed.`);
    const resumed = await setSubscriptionStatus(trx, row.id, 'active');
    await recordWebhookChange(trx, 'webhook.resumed', row, actor, { previous_status: row.status });
    return resumed;
  });
}

/**
 * The dashboard's status buttons: activating a paused subscription (requires_attention)
 * resumes it, anything else is changeSubscriptionStatus. Says which it did.
 */
export async function changeOrResumeSubscription(
  db: Db,
  scope: SubscriptionScope,
  id: string,
  status: Exclude<SubscriptionStatus, 'requires_attention'>,
  actor: SubscriptionActor,
): Promise<{ resumed: boolean }> {
  // Another organization's or environment's subscription reads as absent: the change's 404.
  const paused = status === 'active' && (await findSubscription(db, scope, id))?.status === 'requires_attention';
  if (paused) await resumeSubscription(db, id, scope, actor);
  else await changeSubscriptionStatus(db, scope, id, status, actor);
  return { resumed: paused };
}
