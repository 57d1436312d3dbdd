import type { Context } from 'koa';
import { EVENT_CATEGORIES, webhookPageCategories } from '../events/categories.js';
import { changeOrResumeSubscription, subscribe, subscriptionsPage } from '../events/subscriptions-service.js';
import { userActor } from '../events/actor.js';
import { recentDeliveries, replayDelivery } from '../events/deliveries-service.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import type { Membership } from '../identity/memberships.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * The webhooks page of an organization with events (a fund provider's donor-advised-fund kinds,
 * a nonprofit's or platform's giving kinds): its endpoints in this environment, adding one (the generated signing
 * secret shown once), disabling, enabling and deleting them, resuming one the dispatcher
 * paused after repeated failures, and the recent deliveries with a Replay for each.
 */

const STATUS_LABELS = {
  active: 'Active',
  disabled: 'Disabled',
  requires_attention: 'Paused: needs attention',
  deleted: 'Deleted',
} as const;
const DELIVERY_LABELS = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed' } as const;
const RECENT_DELIVERIES = 25;

interface PageState {
  created?: { url: string; secret: string };
  /** The endpoint asked for exists already (same URL and event): nothing was added. */
  existing?: { url: string };
  error?: string;
  form?: { url?: string; category?: string };
  status?: number;
}

/**
 * The organization of the page must have events of its own: a fund provider (the DAF kinds), a
 * nonprofit or a platform (DAFpay giving's kinds, docs/giving.md); others have no webhooks page.
 */
function fundProvider(request: OrgRequest): OrgRequest {
  if (webhookPageCategories(request.organization.kind).length === 0)
    throw notFound('Webhooks carry the events of fund providers, nonprofits and platforms.');
  return request;
}

const scopeOf = (deps: DashboardDeps, organization: Membership) => ({ environment: deps.environment, organizationId: organization.id });

async function render(deps: DashboardDeps, ctx: Context, viewer: Viewer, organization: Membership, state: PageState = {}): Promise<void> {
  const scope = scopeOf(deps, organization);
  const subscriptions = (await subscriptionsPage(deps.db, scope, EVENT_CATEGORIES, undefined, 100)).filter((s) => s.status !== 'deleted');
  const deliveries = await recentDeliveries(deps.db, scope, RECENT_DELIVERIES);
  const notices: Record<string, string> = {
    disabled: 'The endpoint is disabled: nothing is sent to it until you enable it.',
    active: 'The endpoint is active again.',
    resumed: 'The endpoint is resumed: new events are sent to it again.',
    deleted: 'The endpoint is deleted.',
    replayed: 'The delivery is queued again: it is sent within seconds.',
  };
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/webhooks.njk',
    { organization, tab: 'webhooks' },
    {
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      subscriptions: subscriptions.map((s) => ({
        id: s.id,
        url: s.url,
        category: s.category,
        status: s.status,
        statusLabel: STATUS_LABELS[s.status],
        created: shownDate(s.created_at),
        lastSuccess: shownDate(s.last_success_at),
      })),
      deliveries: deliveries.map((d) => ({
        id: d.id,
        category: d.category,
        url: d.url,
        status: d.status,
        statusLabel: DELIVERY_LABELS[d.status],
        attempts: d.attempts,
        answer: d.last_status ? `HTTP ${d.last_status}` : d.last_error,
        when: shownDate(new Date(d.last_attempt_at ?? d.created_at)),
      })),
      categories: webhookPageCategories(organization.kind),
      created: state.created,
      existing: state.existing,
      form: { url: state.form?.url ?? '', category: state.form?.category ?? '' },
      error: state.error,
      notice: typeof ctx.query.done === 'string' ? notices[ctx.query.done] : undefined,
      actions: {
        create: orgPath(organization.ein, 'webhooks'),
        status: orgPath(organization.ein, 'webhooks/status'),
        replay: orgPath(organization.ein, 'webhooks/replay'),
      },
    },
    state.status,
  );
}

/** GET /orgs/:ein/webhooks */
export async function showWebhooks(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const { viewer, organization } = fundProvider(request);
  await render(deps, ctx, viewer, organization);
}

/** POST /orgs/:ein/webhooks: adds an endpoint; its generated signing secret is shown once, in this answer. */
export async function submitWebhook(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const c = fundProvider(request);
  const url = (c.form.url ?? '').trim();
  const category = c.form.category ?? '';
  if (!webhookPageCategories(c.organization.kind).includes(category))
    return render(deps, ctx, c.viewer, c.organization, {
      error: 'Choose one of the events in the list.',
      form: { url, category },
      status: 400,
    });
  try {
    const { generatedSecret, existing, row } = await subscribe(
      { db: deps.db, box: deps.box, profile: deps.profile },
      scopeOf(deps, c.organization),
      { url, category },
      userActor(c.viewer.user.id, ctx.state),
    );
    if (existing) return await render(deps, ctx, c.viewer, c.organization, { existing: { url: row.url }, status: 200 });
    await render(deps, ctx, c.viewer, c.organization, { created: { url, secret: generatedSecret! }, status: 201 });
  } catch (error) {
    if (!(error instanceof DomainError && error.code === 'invalid')) throw error;
    await render(deps, ctx, c.viewer, c.organization, {
      error: `That endpoint cannot be used: ${error.message}`,
      form: { url, category },
      status: 400,
    });
  }
}

/** POST /orgs/:ein/webhooks/status: disables, enables, resumes (a paused one) or deletes an endpoint. */
export async function submitWebhookStatus(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const c = fundProvider(request);
  const status = c.form.status;
  if (status !== 'active' && status !== 'disabled' && status !== 'deleted') throw invalid('The form asked for no known change.');
  const scope = scopeOf(deps, c.organization);
  const id = String(c.form.subscription ?? '').slice(0, 100);
  const { resumed } = await changeOrResumeSubscription(deps.db, scope, id, status, userActor(c.viewer.user.id, ctx.state));
  ctx.status = 303;
  ctx.redirect(`${orgPath(c.organization.ein, 'webhooks')}?done=${resumed ? 'resumed' : status}`);
}

/** POST /orgs/:ein/webhooks/replay: sends a delivery again, with a fresh set of attempts. */
export async function submitReplay(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const c = fundProvider(request);
  await replayDelivery(
    deps.db,
    String(c.form.delivery ?? '').slice(0, 100),
    scopeOf(deps, c.organization),
    userActor(c.viewer.user.id, ctx.state),
  );
  ctx.status = 303;
  ctx.redirect(`${orgPath(c.organization.ein, 'webhooks')}?done=replayed`);
}
