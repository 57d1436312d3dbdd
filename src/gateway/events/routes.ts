import { DEFAULT_CALLERS } from '../auth/require-caller-kind.js';
import { z } from 'zod';
import type { Caller } from '../routing/caller.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { invalid } from '../../errors/domain-error.js';
import { defineRoute } from '../routing/route-spec.js';
import type { ApiVersion } from '../routing/versions.js';
import { eventOf, eventsPage, type EventRow } from '../../events/events-service.js';
import { apiActor } from '../../events/actor.js';
import {
  changeSubscriptionStatus,
  subscribe,
  subscriptionOf,
  subscriptionsPage,
  type SubscriptionRow,
} from '../../events/subscriptions-service.js';
import { CATEGORIES_BY_KIND, DAF_KINDS, EVENT_CATEGORIES, SUBSCRIBING_KINDS } from '../../events/categories.js';

/**
 * Each version's published EventCategory. Under 2026-01-15 the events and subscriptions of
 * later kinds do not exist (lists leave them out, reads are 404, creating one is 400), so a
 * client of that version never receives a category its document does not know.
 */
export const EVENT_CATEGORIES_BY_VERSION: Record<'2026-04-01' | '2026-01-15', readonly [string, ...string[]]> = {
  '2026-04-01': EVENT_CATEGORIES,
  '2026-01-15': EVENT_CATEGORIES.filter((c) => !DAF_KINDS.includes(c)) as [string, ...string[]],
};
const VERSIONS = ['2026-04-01', '2026-01-15'] as const;
/** The categories a caller lists and reads: its version's that its organization's kind has (events/categories.ts). */
const categoriesOf = (version: ApiVersion, caller: Caller) =>
  EVENT_CATEGORIES_BY_VERSION[version as (typeof VERSIONS)[number]].filter((c) => CATEGORIES_BY_KIND[caller.organizationKind].includes(c));
const inVersion = (version: ApiVersion, category: string) =>
  EVENT_CATEGORIES_BY_VERSION[version as (typeof VERSIONS)[number]].includes(category);
const readable = (version: ApiVersion, caller: Caller, category: string) => categoriesOf(version, caller).includes(category);
/** One schema per version, built from that version's categories. */
const perVersion = (build: (categories: readonly [string, ...string[]]) => z.ZodType) =>
  Object.fromEntries(VERSIONS.map((v) => [v, build(EVENT_CATEGORIES_BY_VERSION[v])])) as Record<(typeof VERSIONS)[number], z.ZodType>;

const eventSchema = (categories: readonly [string, ...string[]]) =>
  z.object({
    id: z.string(),
    category: z.enum(categories),
    created_at: z.string(),
    associated_object_id: z.string(),
    associated_object_type: z.string(),
  });
const subscriptionSchema = (categories: readonly [string, ...string[]]) =>
  z.object({
    id: z.string(),
    created_at: z.string(),
    status: z.enum(['active', 'disabled', 'deleted', 'requires_attention']),
    url: z.string(),
    category: z.enum(categories),
    signing_secret: z.string().optional(),
  });
const common = { versions: VERSIONS, area: 'events', credentials: 'any' as const };
// Events: the first kinds, grantmakers and platforms, who have events of their own (nonprofits and
// platforms DAFpay giving's, docs/giving.md).
const events = { ...common, tag: 'Events', callers: [...DEFAULT_CALLERS, 'grantmaker', 'platform'] as const };
// Only the kinds that have events may have webhooks sent anywhere (docs/security.md, "Webhook
// subscriptions by tenants that have no events"): fund providers, grantmakers, nonprofits and
// platforms; 403 otherwise.
const subscriptions = { ...common, tag: 'Event Subscriptions', callers: SUBSCRIBING_KINDS };
const scopeOf = (caller: Caller) => ({ environment: caller.environment, organizationId: caller.organizationId });
const listQuery = { limit: z.coerce.number().int().min(1).max(100).default(100), cursor: z.string().max(200).optional() };

/** The thin Event body, also what webhooks carry. */
export function eventView(row: EventRow) {
  return {
    id: row.id,
    category: row.category,
    created_at: row.created_at.toISOString(),
    associated_object_id: row.associated_object_id,
    associated_object_type: row.associated_object_type,
  };
}

function subscriptionView(row: SubscriptionRow, secret?: string) {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    status: row.status,
    url: row.url,
    category: row.category,
    ...(secret ? { signing_secret: secret } : {}),
  };
}

export const eventRoutes = [
  defineRoute({
    ...events,
    operationId: 'listEvents',
    method: 'get',
    path: '/v1/events',
    summary: "List your organization's events, newest first",
    access: 'read',
    query: z.object({ ...listQuery, category: z.enum(EVENT_CATEGORIES).optional() }).strict(),
    queryByVersion: perVersion((categories) => z.object({ ...listQuery, category: z.enum(categories).optional() }).strict()),
    response: perVersion((categories) => z.object({ results: z.array(eventSchema(categories)), nextPageToken: z.string().optional() })),
    errors: [400, 401, 403],
    async handler({ db, caller, query, version }) {
      const mine = categoriesOf(version, caller);
      const categories = query.category ? mine.filter((c) => c === query.category) : mine;
      // A kind without events (or a category not its own) has none: no query to run.
      if (categories.length === 0) return { results: [] };
      const rows = await eventsPage(db, scopeOf(caller), categories, decodeCursor(query.cursor, 'cursor'), query.limit);
      return listPage(rows, query.limit, eventView, 'nextPageToken');
    },
  }),
  defineRoute({
    ...events,
    operationId: 'getEvent',
    method: 'get',
    path: '/v1/events/:id',
    summary: 'Get an event',
    access: 'read',
    params: z.object({ id: z.string().min(1).max(100) }),
    response: perVersion(eventSchema),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, version }) {
      const row = await eventOf(db, scopeOf(caller), params.id);
      if (!row || !readable(version, caller, row.category)) throw resourceNotFound('The event');
      return eventView(row);
    },
  }),
  defineRoute({
    ...subscriptions,
    operationId: 'createEventSubscription',
    method: 'post',
    path: '/v1/event_subscriptions',
    summary: 'Subscribe a webhook URL to one event category; returns the signing secret only when generated',
    access: 'write',
    body: z.object({ url: z.string().min(1), category: z.enum(EVENT_CATEGORIES), signing_secret: z.string().optional() }).strict(),
    status: 201,
    idempotent: true,
    location: (result) => `/v1/event_subscriptions/${(result as { id: string }).id}`,
    response: perVersion(subscriptionSchema),
    errors: [400, 401, 403],
    async handler({ ctx, db, caller, body, services, version }) {
      const input = body as { url: string; category: string; signing_secret?: string };
      if (!inVersion(version, input.category)) throw invalid(`category ${input.category} does not exist in API version ${version}.`);
      if (!readable(version, caller, input.category))
        throw invalid(
          `category ${input.category} is not one your organization subscribes to; its categories are ${categoriesOf(version, caller).join(', ')}.`,
        );
      const { row, generatedSecret } = await subscribe(
        { db, box: services.box, profile: services.profile },
        scopeOf(caller),
        { url: input.url, category: input.category, signingSecret: input.signing_secret },
        apiActor(caller, ctx.state),
      );
      return subscriptionView(row, generatedSecret);
    },
  }),
  defineRoute({
    ...subscriptions,
    operationId: 'listEventSubscriptions',
    method: 'get',
    path: '/v1/event_subscriptions',
    summary: "List your organization's event subscriptions",
    access: 'read',
    query: z.object(listQuery).strict(),
    response: perVersion((categories) =>
      z.object({ results: z.array(subscriptionSchema(categories)), nextPageToken: z.string().optional() }),
    ),
    errors: [400, 401, 403],
    async handler({ db, caller, query, version }) {
      const rows = await subscriptionsPage(
        db,
        scopeOf(caller),
        categoriesOf(version, caller),
        decodeCursor(query.cursor, 'cursor'),
        query.limit,
      );
      return listPage(rows, query.limit, (row) => subscriptionView(row), 'nextPageToken');
    },
  }),
  defineRoute({
    ...subscriptions,
    operationId: 'getEventSubscription',
    method: 'get',
    path: '/v1/event_subscriptions/:id',
    summary: 'Get an event subscription',
    access: 'read',
    params: z.object({ id: z.string().min(1).max(100) }),
    response: perVersion(subscriptionSchema),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, version }) {
      const row = await subscriptionOf(db, scopeOf(caller), params.id);
      if (!row || !readable(version, caller, row.category)) throw resourceNotFound('The event subscription');
      return subscriptionView(row);
    },
  }),
  defineRoute({
    ...subscriptions,
    operationId: 'updateEventSubscription',
    method: 'patch',
    path: '/v1/event_subscriptions/:id',
    summary: 'Activate, disable or delete an event subscription',
    access: 'write',
    params: z.object({ id: z.string().min(1).max(100) }),
    body: z.object({ status: z.enum(['active', 'disabled', 'deleted']).optional() }).strict(),
    response: perVersion(subscriptionSchema),
    errors: [400, 401, 403, 404],
    async handler({ ctx, db, caller, params, body, version }) {
      const row = await subscriptionOf(db, scopeOf(caller), params.id);
      if (!row || !readable(version, caller, row.category)) throw resourceNotFound('The event subscription');
      const { status } = body as { status?: 'active' | 'disabled' | 'deleted' };
      return subscriptionView(
        status ? await changeSubscriptionStatus(db, scopeOf(caller), row.id, status, apiActor(caller, ctx.state)) : row,
      );
    },
  }),
];
