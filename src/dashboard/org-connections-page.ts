import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import { connectionView, consentsOf, revokeConnectionRow, revokedNotice } from './connections-page.js';
import { findConnection, listOrganizationConnections } from './connections-repository.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';

/**
 * GET /orgs/:ein/connections: every application with live access to the organization in this
 * environment. Access that belongs to the organization may be revoked by any Owner or Admin;
 * access that acts as a member only by that member (or by removing them), so it is listed with
 * who approved it.
 */
export async function showOrganizationConnections(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await listOrganizationConnections(deps.db, deps.environment, organization.id);
  const consents = await consentsOf(deps, rows);
  const view = (row: (typeof rows)[number]) => ({
    ...connectionView(row, environmentName, consents.get(row.grant_id)),
    yours: row.user_id === viewer.user.id,
  });
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await findConnection(deps.db, deps.environment, ctx.query.revoked);
    if (revoked?.revoked_at && revoked.organization_id === organization.id) notice = await revokedNotice(deps, revoked);
  }
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/org-connections.njk',
    { organization, tab: 'connections' },
    {
      environmentName,
      organizationAccess: rows.filter((r) => r.subject_type === 'organization').map(view),
      memberAccess: rows.filter((r) => r.subject_type === 'user').map(view),
      revokeAction: orgPath(organization.ein, 'connections/revoke'),
      notice,
    },
  );
}

/** POST /orgs/:ein/connections/revoke: ends an authorization of the organization and every token it issued. */
export async function revokeOrganizationConnection(
  deps: DashboardDeps,
  ctx: Context,
  { viewer, organization, form }: OrgRequest,
): Promise<void> {
  const grantId = form.grant ?? '';
  const row = grantId.length > 0 && grantId.length <= 128 ? await findConnection(deps.db, deps.environment, grantId) : undefined;
  // Another organization's or environment's authorization: 404, as if it did not exist.
  if (!row || row.organization_id !== organization.id) throw notFound('There is no such connected application.');
  if (row.subject_type === 'user' && row.user_id !== viewer.user.id) {
    throw forbidden(
      `This access acts as ${row.approver_email}. They can revoke it on their Connected applications page; removing them from ${organization.name} ends it too.`,
      { title: 'Only the member who approved it can revoke this access' },
    );
  }
  await revokeConnectionRow(deps, ctx, viewer, row, 'organization_page');
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'connections')}?revoked=${encodeURIComponent(row.grant_id)}`);
}
