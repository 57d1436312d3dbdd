import type { Context } from 'koa';
import { KIND_LABELS, ROLE_NAMES } from '../identity/memberships.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { ACCOUNT_PASSWORD_PATH, orgPath } from './paths.js';
import { secondFactorSummary } from '../mfa/second-factors.js';

/** GET /account: the signed-in user's own account, for every role. */
export async function showAccount(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
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
      disbursementsHref:
        m.role === 'owner' || m.role === 'admin'
          ? undefined
          : m.kind === 'grantmaker'
            ? orgPath(m.ein, 'grantmaking')
            : m.kind === 'nonprofit'
              ? orgPath(m.ein, 'incoming')
              : undefined,
    })),
  });
}
