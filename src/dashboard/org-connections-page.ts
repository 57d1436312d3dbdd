import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import { recordAudit } from '../audit/audit-log.js';
import { readForm } from '../http/form-body.js';
import { revokeAuthorization } from '../authorizations/authorizations.js';
import { connectionView } from './connections-page.js';
import { findConnection, listOrganizationConnections } from './connections-repository.js';
import type { DashboardDeps } from './deps.js';
import { managedOrganization, requireViewer, verifySessionCsrf } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';

/**
 * GET /orgs/:ein/connections: every application with live access to the organization in this
 * environment. Access that belongs to the organization may be revoked by any Owner or Admin;
 * access that acts as a member only by that member (or by removing them), so it is listed with
 * who approved it.
 */
export async function showOrganizationConnections(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await requireViewer(deps, ctx);
  if (!viewer) return;
  const organization = managedOrganization(viewer, ctx.params.ein);
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await listOrganizationConnections(deps.db, deps.environment, organization.id);
  const view = (row: (typeof rows)[number]) => ({ ...connectionView(row, environmentName), yours: row.user_id === viewer.user.id });
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await findConnection(deps.db, deps.environment, ctx.query.revoked);
    if (revoked?.revoked_at && revoked.organization_id === organization.id) notice = `${revoked.client_name ?? 'The application'} no longer has access to ${organization.name}. Its tokens stopped working immediately.`;
  }
  sendDashboardPage(deps, ctx, viewer, 'dashboard/org-connections.njk', { organization, tab: 'connections' }, {
    environmentName,
    organizationAccess: rows.filter((r) => r.subject_type === 'organization').map(view),
    memberAccess: rows.filter((r) => r.subject_type === 'user').map(view),
    revokeAction: orgPath(organization.ein, 'connections/revoke'),
    notice,
  });
}

/** POST /orgs/:ein/connections/revoke: ends an authorization of the organization and every token it issued. */
export async function revokeOrganizationConnection(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, orgPath(String(ctx.params.ein), 'connections'));
  if (!viewer) return;
  const organization = managedOrganization(viewer, ctx.params.ein);
  verifySessionCsrf(deps, ctx, viewer, form);
  const grantId = form.grant ?? '';
  const row = grantId.length > 0 && grantId.length <= 128 ? await findConnection(deps.db, deps.environment, grantId) : undefined;
  // Another organization's or environment's authorization: 404, as if it did not exist.
  if (!row || row.organization_id !== organization.id) throw notFound('There is no such connected application.');
  if (row.subject_type === 'user' && row.user_id !== viewer.user.id) {
    throw forbidden(`This access acts as ${row.approver_email}. They can revoke it on their Connected applications page; removing them from ${organization.name} ends it too.`, { title: 'Only the member who approved it can revoke this access' });
  }
  if (!row.revoked_at && (await revokeAuthorization(deps.db, deps.environment, row.grant_id, 'revoked_by_user'))) {
    await recordAudit(deps.db, {
      event: 'authorization.revoked',
      environment: deps.environment,
      actorUserId: viewer.user.id,
      organizationId: organization.id,
      clientId: row.client_id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { grant_id: row.grant_id, subject_type: row.subject_type, via: 'organization_page' },
    });
  }
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'connections')}?revoked=${encodeURIComponent(row.grant_id)}`);
}
