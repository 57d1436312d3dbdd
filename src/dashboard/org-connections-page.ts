import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import { connectionView, consentsOf, revokeConnectionRow, revokedNotice, sendRevocationConfirmation } from './connections-page.js';
import { connectionOf, organizationConnections, type ConnectionRow } from './connections-service.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * GET /orgs/:ein/connections: every application with live access to the organization in this
 * environment. Access that belongs to the organization may be revoked by any Owner or Admin;
 * access that acts as a member only by that member (or by removing them), so it is listed with
 * who approved it, except bank-data access (an FDX consent): the organization's bank accounts
 * are its own, so any Owner or Admin may revoke that, whoever approved it (docs/bank-data.md,
 * "Consents"). Revoking asks first, on a page of its own.
 */

/** Whether the viewer (an Owner or Admin of the organization: orgRoute) may revoke this access here. */
function mayRevoke(viewer: Viewer, row: ConnectionRow): boolean {
  return row.subject_type === 'organization' || row.user_id === viewer.user.id || row.fdx_consent_id !== null;
}

const revocationPath = (ein: string, grantId: string) => orgPath(ein, `connections/${encodeURIComponent(grantId)}/revoke`);

export async function showOrganizationConnections(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await organizationConnections(deps.db, deps.environment, organization.id);
  const consents = await consentsOf(deps, rows);
  const view = (row: (typeof rows)[number]) => ({
    ...connectionView(row, environmentName, consents.get(row.grant_id)),
    yours: row.user_id === viewer.user.id,
    revokeHref: mayRevoke(viewer, row) ? revocationPath(organization.ein, row.grant_id) : undefined,
  });
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await connectionOf(deps.db, deps.environment, ctx.query.revoked);
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
      notice,
    },
  );
}

/**
 * An authorization of the organization the viewer may revoke. Another organization's or
 * environment's: 404, as if it did not exist; a member's own (not bank data): 403, saying who can.
 */
async function revocableConnection({ viewer, organization }: OrgRequest, deps: DashboardDeps, grantId: string): Promise<ConnectionRow> {
  const row = grantId.length > 0 && grantId.length <= 128 ? await connectionOf(deps.db, deps.environment, grantId) : undefined;
  if (!row || row.organization_id !== organization.id) throw notFound('There is no such connected application.');
  if (!mayRevoke(viewer, row)) {
    throw forbidden(
      `This access acts as ${row.approver_email}. They can revoke it on their Connected applications page; removing them from ${organization.name} ends it too.`,
      { title: 'Only the member who approved it can revoke this access' },
    );
  }
  return row;
}

/** GET /orgs/:ein/connections/:grant/revoke: what revoking ends, and the button that does it. */
export async function showOrganizationConnectionRevocation(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const { viewer, organization } = request;
  const row = await revocableConnection(request, deps, String(ctx.params.grant ?? ''));
  const list = orgPath(organization.ein, 'connections');
  if (row.revoked_at) {
    ctx.status = 303;
    ctx.redirect(list);
    return;
  }
  await sendRevocationConfirmation(deps, ctx, viewer, { organization, tab: 'connections' }, row, {
    revokeAction: orgPath(organization.ein, 'connections/revoke'),
    cancel: list,
  });
}

/** POST /orgs/:ein/connections/revoke: ends an authorization of the organization and every token it issued. */
export async function revokeOrganizationConnection(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const { viewer, organization, form } = request;
  const row = await revocableConnection(request, deps, form.grant ?? '');
  await revokeConnectionRow(deps, ctx, viewer, row, 'organization_page');
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'connections')}?revoked=${encodeURIComponent(row.grant_id)}`);
}
