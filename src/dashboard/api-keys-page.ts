import type { Context } from 'koa';
import { createOrganizationApiKey, revokeApiKey } from '../gateway/api-keys/service.js';
import { listApiKeysOfOrganization } from '../gateway/api-keys/repository.js';
import type { Environment } from '../db/schema.js';
import type { Membership } from '../identity/memberships.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

const ENVIRONMENT_NAMES: Record<Environment, string> = { production: 'Production', sandbox: 'Sandbox' };
const other = (environment: Environment): Environment => (environment === 'production' ? 'sandbox' : 'production');

async function render(deps: DashboardDeps, ctx: Context, viewer: Viewer, organization: Membership, created?: { id: string; key: string }): Promise<void> {
  const rows = await listApiKeysOfOrganization(deps.db, organization.id, deps.environment);
  const revoked = typeof ctx.query.revoked === 'string' ? rows.find((r) => r.id === ctx.query.revoked && r.revoked_at) : undefined;
  const otherEnvironment = other(deps.environment);
  sendDashboardPage(deps, ctx, viewer, 'dashboard/api-keys.njk', { organization, tab: 'api-keys' }, {
    environmentLabel: ENVIRONMENT_NAMES[deps.environment],
    keys: rows.map((r) => ({ id: r.id, prefix: r.key_prefix, created: shownDate(r.created_at), lastUsed: shownDate(r.last_used_at), revoked: shownDate(r.revoked_at) })).reverse(),
    created,
    notice: revoked ? `The key ${revoked.key_prefix}… is revoked: it stopped working at once.` : undefined,
    createAction: orgPath(organization.ein, 'api-keys'),
    revokeAction: orgPath(organization.ein, 'api-keys/revoke'),
    otherEnvironment: { name: ENVIRONMENT_NAMES[otherEnvironment], href: `${deps.dashboardOrigins[otherEnvironment]}${orgPath(organization.ein, 'api-keys')}` },
  }, created ? 201 : undefined);
}

/** GET /orgs/:ein/api-keys: this environment's keys of the organization. */
export async function showApiKeys(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  await render(deps, ctx, viewer, organization);
}

/** POST /orgs/:ein/api-keys: creates a key and shows it, once, in the answer (never in a URL). */
export async function submitApiKey(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const created = await createOrganizationApiKey(deps.db, { organizationId: organization.id, environment: deps.environment, actorUserId: viewer.user.id, ip: ctx.state.clientIp, requestId: ctx.state.requestId });
  await render(deps, ctx, viewer, organization, created);
}

/** POST /orgs/:ein/api-keys/revoke: a key of this organization and environment stops working at once. */
export async function submitApiKeyRevocation(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  const id = /^key_[0-9a-f]{24}$/.test(form.key ?? '') ? form.key! : 'key_unknown';
  // Another organization's key, another environment's, or no key at all: 404 (the service's not_found).
  await revokeApiKey(deps.db, id, { organizationId: organization.id, environment: deps.environment, actorUserId: viewer.user.id, ip: ctx.state.clientIp, requestId: ctx.state.requestId });
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'api-keys')}?revoked=${encodeURIComponent(id)}`);
}
