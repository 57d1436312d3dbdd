import type { Context } from 'koa';
import { KIND_LABELS, ROLE_NAMES } from '../oidc/interactions/organization-page.js';
import type { DashboardDeps } from './deps.js';
import { requireViewer } from './guards.js';
import { sendDashboardPage } from './page.js';
import { ACCOUNT_PASSWORD_PATH, orgPath } from './paths.js';
import { secondFactorSummary } from '../mfa/second-factors.js';

/** GET /account: the signed-in user's own account, for every role. */
export async function showAccount(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await requireViewer(deps, ctx);
  if (!viewer) return;
  const summary = await secondFactorSummary(deps.db, viewer.user.id);
  sendDashboardPage(deps, ctx, viewer, 'dashboard/account.njk', 'account', {
    passwordHref: ACCOUNT_PASSWORD_PATH,
    secondFactor: summary.totp || summary.passkeys > 0,
    hasPasskeys: summary.passkeys > 0,
    organizations: viewer.memberships.map((m) => ({
      name: m.name,
      kind: KIND_LABELS[m.kind].label,
      ein: m.ein,
      roleName: ROLE_NAMES[m.role],
      manageHref: m.role === 'owner' || m.role === 'admin' ? orgPath(m.ein, 'members') : undefined,
    })),
  });
}
