import type { Context } from 'koa';
import { notFound } from '../errors/domain-error.js';
import { recordAudit } from '../audit/audit-log.js';
import { readForm } from '../http/form-body.js';
import { revokeAuthorizationIn } from '../authorizations/authorizations.js';
import { inTransaction } from '../db/executor.js';
import { KIND_LABELS } from '../identity/memberships.js';
import { describeScopes } from '../oidc/interactions/scope-descriptions.js';
import { findConnection, listManagedConnections, type ConnectionRow } from './connections-repository.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import { verifySessionCsrf } from './guards.js';
import { sendDashboardPage } from './page.js';
import { CONFIRM_PATH, CONNECTIONS_PATH, REVOKE_PATH } from './paths.js';
import { showSignIn } from './sign-in-page.js';
import { currentViewer, type Viewer } from './viewer.js';

/** How the page names the organizations: "nonprofits" for a nonprofit's staff, "organizations" once a fund provider is among them. */
function organizationsNoun(viewer: Viewer): string {
  return viewer.memberships.some((m) => m.kind === 'fund_provider') ? 'organizations' : 'nonprofits';
}

/**
 * The organizations whose access this session lists and revokes here: those the user manages
 * (Owner or Admin) and whose second-factor rule the session meets, as on the organization's
 * own pages (docs/accounts.md, "Second factors").
 */
const adminOf = (viewer: Viewer) => viewer.actsFor.map((m) => m.id);

/** Never another user's, nor another organization's: the same rule for listing and revoking. */
function manages(viewer: Viewer, row: ConnectionRow): boolean {
  return row.subject_type === 'user' ? row.user_id === viewer.user.id : adminOf(viewer).includes(row.organization_id);
}

export function connectionView(row: ConnectionRow, environment: string) {
  return {
    grantId: row.grant_id,
    application: row.client_name ?? `Removed application (${row.client_id})`,
    environment,
    organization: row.organization_name,
    kind: KIND_LABELS[row.organization_kind],
    organizationSubject: row.subject_type === 'organization',
    approver: row.approver_email,
    permissions: describeScopes(row.scopes, row.organization_kind),
    granted: shownDate(row.created_at),
    lastUsed: shownDate(row.last_used_at),
  };
}

/** Ends an authorization and every token it issued, with its audit row, in one transaction (nothing when it ended already). */
export async function revokeConnectionRow(deps: DashboardDeps, ctx: Context, viewer: Viewer, row: ConnectionRow, via: 'connections_page' | 'organization_page'): Promise<void> {
  if (row.revoked_at) return;
  await inTransaction(deps.db, async (trx) => {
    if (!(await revokeAuthorizationIn(trx, deps.environment, row.grant_id, 'revoked_by_user'))) return;
    await recordAudit(trx, {
      event: 'authorization.revoked',
      environment: deps.environment,
      actorUserId: viewer.user.id,
      organizationId: row.organization_id,
      clientId: row.client_id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { grant_id: row.grant_id, subject_type: row.subject_type, via },
    });
  });
}

/** GET /oauth/connections: the list, or the sign-in form when nobody is signed in. */
export async function showConnections(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await currentViewer(deps, ctx);
  if (!viewer) return showSignIn(deps, ctx, { next: CONNECTIONS_PATH, notice: ctx.query.signed_out === '1' ? 'You are signed out.' : undefined });
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await listManagedConnections(deps.db, deps.environment, viewer.user.id, adminOf(viewer));
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await findConnection(deps.db, deps.environment, ctx.query.revoked);
    if (revoked?.revoked_at && manages(viewer, revoked)) {
      notice = `${revoked.client_name ?? 'The application'} no longer has access to ${revoked.organization_name}. Its tokens stopped working immediately.`;
    }
  }
  sendDashboardPage(deps, ctx, viewer, 'connections.njk', 'connections', {
    connections: rows.map((row) => connectionView(row, environmentName)),
    managesOrganizations: viewer.manages.length > 0,
    needSecondFactor: viewer.manages.filter((m) => !viewer.actsFor.includes(m)).map((m) => m.name),
    confirmHref: `${CONFIRM_PATH}?next=${encodeURIComponent(CONNECTIONS_PATH)}`,
    organizationsNoun: organizationsNoun(viewer),
    notice,
    revokeAction: REVOKE_PATH,
  });
}

/** POST /oauth/connections/revoke: ends the authorization and every token it issued, at once. */
export async function revokeConnection(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await currentViewer(deps, ctx);
  if (!viewer) {
    ctx.status = 303;
    ctx.redirect(CONNECTIONS_PATH);
    return;
  }
  verifySessionCsrf(deps, ctx, viewer, form);
  const grantId = form.grant ?? '';
  const row = grantId.length > 0 && grantId.length <= 128 ? await findConnection(deps.db, deps.environment, grantId) : undefined;
  // Someone else's authorization, another organization's or another environment's: 404, as if
  // it did not exist, so the answer reveals nothing.
  if (!row || !manages(viewer, row)) throw notFound('There is no such connected application.');
  await revokeConnectionRow(deps, ctx, viewer, row, 'connections_page');
  ctx.status = 303;
  ctx.redirect(`${CONNECTIONS_PATH}?revoked=${encodeURIComponent(row.grant_id)}`);
}
