import type { Context } from 'koa';
import { listMembershipsOfOrganization } from '../accounts/repository.js';
import { ROLE_NAMES } from '../interactions/organization-page.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import { managedOrganization, requireViewer } from './guards.js';
import { sendDashboardPage } from './page.js';

/** GET /orgs/:ein/members: the organization's staff, for its Owners and Admins. */
export async function showMembers(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await requireViewer(deps, ctx);
  if (!viewer) return;
  const organization = managedOrganization(viewer, ctx.params.ein);
  const rows = await listMembershipsOfOrganization(deps.db, organization.id);
  sendDashboardPage(deps, ctx, viewer, 'dashboard/members.njk', { organization, tab: 'members' }, {
    members: rows.map((r) => ({ email: r.email, name: r.display_name, roleName: ROLE_NAMES[r.role], since: shownDate(r.created_at), you: r.user_id === viewer.user.id })),
  });
}
