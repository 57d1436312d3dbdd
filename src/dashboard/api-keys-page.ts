import type { Context } from 'koa';
import {
  API_KEY_NAME_MAX,
  apiKeyName,
  apiKeyOf,
  apiKeysOfOrganization,
  createOrganizationApiKey,
  revokeApiKey,
} from '../api-keys/service.js';
import type { Environment } from '../db/schema.js';
import { conflict, DomainError, invalid, notFound } from '../errors/domain-error.js';
import type { Membership } from '../identity/memberships.js';
import { keepForOneDisplay, takeForDisplay, type OneTimeSecretScope } from '../keys/one-time-secrets.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * An organization's API keys (docs/accounts.md, "Organization pages"). A new key is made by a
 * form whose answer redirects (post/redirect/get): the page it lands on shows the key once,
 * read from a one-time display bound to this browser session (keys/one-time-secrets.ts), so a
 * reload makes no second key and shows the key no more; the key is never in a URL. Revoking
 * asks first, on a page of its own.
 */

const ENVIRONMENT_NAMES: Record<Environment, string> = { production: 'Production', sandbox: 'Sandbox' };
const other = (environment: Environment): Environment => (environment === 'production' ? 'sandbox' : 'production');

/** How long a new key waits to be shown: the redirect that follows the form, or a slow one. */
const SHOW_WITHIN_SECONDS = 300;

const KEY_ID = /^key_[0-9a-f]{24}$/;

/** Who may see a new key: this browser session, on this organization's page of this environment. */
const display = (deps: DashboardDeps, viewer: Viewer, organization: Membership): OneTimeSecretScope => ({
  purpose: 'api_key',
  binding: `${deps.environment}:${viewer.session.uid}:${organization.id}`,
});

interface PageState {
  created?: { id: string; key: string };
  /** The form's name, shown again with `error` when it was refused. */
  name?: string;
  error?: string;
  status?: number;
  notice?: string;
}

async function render(deps: DashboardDeps, ctx: Context, viewer: Viewer, organization: Membership, state: PageState = {}): Promise<void> {
  const rows = await apiKeysOfOrganization(deps.db, organization.id, deps.environment);
  const revoked = typeof ctx.query.revoked === 'string' ? rows.find((r) => r.id === ctx.query.revoked && r.revoked_at) : undefined;
  const created = state.created ? rows.find((r) => r.id === state.created!.id) : undefined;
  const otherEnvironment = other(deps.environment);
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/api-keys.njk',
    { organization, tab: 'api-keys' },
    {
      environmentLabel: ENVIRONMENT_NAMES[deps.environment],
      keys: rows
        .map((r) => ({
          id: r.id,
          name: r.name,
          prefix: r.key_prefix,
          created: shownDate(r.created_at),
          lastUsed: shownDate(r.last_used_at),
          revoked: shownDate(r.revoked_at),
          revokeHref: orgPath(organization.ein, `api-keys/${r.id}/revoke`),
        }))
        .reverse(),
      created: state.created && { key: state.created.key, name: created?.name },
      notice:
        state.notice ??
        (revoked
          ? `The key ${revoked.name ? `${revoked.name} (${revoked.key_prefix}…)` : `${revoked.key_prefix}…`} is revoked: it stopped working at once.`
          : undefined),
      error: state.error,
      name: state.name ?? '',
      nameMax: API_KEY_NAME_MAX,
      createAction: orgPath(organization.ein, 'api-keys'),
      otherEnvironment: {
        name: ENVIRONMENT_NAMES[otherEnvironment],
        href: `${deps.dashboardOrigins[otherEnvironment]}${orgPath(organization.ein, 'api-keys')}`,
      },
    },
    state.status,
  );
}

/**
 * GET /orgs/:ein/api-keys: this environment's keys of the organization; with `?created=`, the
 * key just made, shown this once (a reload, another browser or a late visit finds it gone).
 */
export async function showApiKeys(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  if (ctx.query.created === undefined) return render(deps, ctx, viewer, organization);
  const shown = await takeForDisplay(deps.db, deps.box, display(deps, viewer, organization), ctx.query.created);
  if (!shown)
    return render(deps, ctx, viewer, organization, {
      notice:
        'A new key is shown only once, right after it is made, and this one has been. If it was not copied, revoke it below and create another.',
    });
  await render(deps, ctx, viewer, organization, { created: JSON.parse(shown) as { id: string; key: string } });
}

/** POST /orgs/:ein/api-keys: creates a named key, then sends the browser to the page that shows it once. */
export async function submitApiKey(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  let name: string;
  try {
    const given = apiKeyName(form.name);
    if (!given) throw invalid('give the key a name, such as what it is for');
    name = given;
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'invalid') throw error;
    return render(deps, ctx, viewer, organization, {
      error: error.sentence,
      status: 400,
      name: (form.name ?? '').slice(0, API_KEY_NAME_MAX),
    });
  }
  const created = await createOrganizationApiKey(deps.db, {
    organizationId: organization.id,
    environment: deps.environment,
    name,
    actorUserId: viewer.user.id,
    ip: ctx.state.clientIp,
    requestId: ctx.state.requestId,
  });
  const id = await keepForOneDisplay(
    deps.db,
    deps.box,
    display(deps, viewer, organization),
    JSON.stringify({ id: created.id, key: created.key }),
    SHOW_WITHIN_SECONDS,
  );
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'api-keys')}?created=${id}`);
}

/** GET /orgs/:ein/api-keys/:key/revoke: what revoking ends, and the button that does it. */
export async function showApiKeyRevocation(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const id = String(ctx.params.key ?? '');
  const key = KEY_ID.test(id) ? await apiKeyOf(deps.db, id, { organizationId: organization.id, environment: deps.environment }) : undefined;
  // Another organization's key, another environment's, or no key at all: 404 (as the form's).
  if (!key) throw notFound(`There is no API key ${id.slice(0, 40)} here.`);
  if (key.revoked_at) throw conflict(`The key ${key.name ?? `${key.key_prefix}…`} is already revoked.`, { title: 'Already revoked' });
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/api-key-revoke.njk',
    { organization, tab: 'api-keys' },
    {
      environmentLabel: ENVIRONMENT_NAMES[deps.environment],
      key: {
        id: key.id,
        name: key.name,
        prefix: key.key_prefix,
        created: shownDate(key.created_at),
        lastUsed: shownDate(key.last_used_at),
      },
      revokeAction: orgPath(organization.ein, 'api-keys/revoke'),
      cancel: orgPath(organization.ein, 'api-keys'),
    },
  );
}

/** POST /orgs/:ein/api-keys/revoke: a key of this organization and environment stops working at once. */
export async function submitApiKeyRevocation(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  const id = KEY_ID.test(form.key ?? '') ? form.key! : 'key_unknown';
  // Another organization's key, another environment's, or no key at all: 404 (the service's not_found).
  await revokeApiKey(deps.db, id, {
    organizationId: organization.id,
    environment: deps.environment,
    actorUserId: viewer.user.id,
    ip: ctx.state.clientIp,
    requestId: ctx.state.requestId,
  });
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'api-keys')}?revoked=${encodeURIComponent(id)}`);
}
