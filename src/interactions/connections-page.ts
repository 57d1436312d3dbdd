import type { Context } from 'koa';
import { recordAudit } from '../audit/audit-log.js';
import { findUserIdentity } from '../accounts/repository.js';
import { HttpProblem } from '../http/problem.js';
import { readForm } from '../http/form-body.js';
import { revokeAuthorization } from '../oidc/authorizations.js';
import { sendPage } from '../views/page.js';
import { csrfToken, verifyCsrf } from './csrf.js';
import { findConnection, listManagedConnections, type ConnectionRow } from './connections-repository.js';
import type { InteractionDeps } from './interaction.js';
import { KIND_LABELS, membershipsOf } from './organization-page.js';
import { signedInSession } from './provider-session.js';
import { describeScopes } from './scope-descriptions.js';
import { showConnectionsSignIn } from './connections-sign-in.js';

export const CONNECTIONS_PATH = '/oauth/connections';
export const REVOKE_PATH = `${CONNECTIONS_PATH}/revoke`;
export const LOGOUT_PATH = '/oauth/logout';

const DATE = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const when = (date: Date | null) => (date ? { iso: date.toISOString(), text: `${DATE.format(date)} UTC` } : undefined);

/** Who is signed in, and which organizations' organization-subject authorizations they manage. */
async function viewer(deps: InteractionDeps, ctx: Context) {
  const session = await signedInSession(deps, ctx);
  const user = session ? await findUserIdentity(deps.db, session.accountId) : undefined;
  if (!session || !user || user.disabled_at) return undefined;
  const memberships = await membershipsOf(deps, user.id);
  const adminOf = memberships.filter((m) => m.role === 'owner' || m.role === 'admin').map((m) => m.id);
  // How the page names them: "nonprofits" for a nonprofit's staff, "organizations" once a fund provider is among them.
  const organizationsNoun = memberships.some((m) => m.kind === 'fund_provider') ? 'organizations' : 'nonprofits';
  return { session, user, adminOf, organizationsNoun };
}

type Viewer = NonNullable<Awaited<ReturnType<typeof viewer>>>;

/** Never another user's, nor another organization's: the same rule for listing and revoking. */
function manages(who: Viewer, row: ConnectionRow): boolean {
  return row.subject_type === 'user' ? row.user_id === who.user.id : who.adminOf.includes(row.organization_id);
}

function connectionView(row: ConnectionRow, environment: string) {
  return {
    grantId: row.grant_id,
    application: row.client_name ?? `Removed application (${row.client_id})`,
    environment,
    organization: row.organization_name,
    kind: KIND_LABELS[row.organization_kind],
    organizationSubject: row.subject_type === 'organization',
    approver: row.approver_email,
    permissions: describeScopes(row.scopes, row.organization_kind),
    granted: when(row.created_at),
    lastUsed: when(row.last_used_at),
  };
}

/** GET /oauth/connections: the list, or the sign-in form when nobody is signed in. */
export async function showConnections(deps: InteractionDeps, ctx: Context): Promise<void> {
  const who = await viewer(deps, ctx);
  if (!who) return showConnectionsSignIn(deps, ctx, { notice: ctx.query.signed_out === '1' ? 'You are signed out.' : undefined });
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await listManagedConnections(deps.db, deps.environment, who.user.id, who.adminOf);
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await findConnection(deps.db, deps.environment, ctx.query.revoked);
    if (revoked?.revoked_at && manages(who, revoked)) {
      notice = `${revoked.client_name ?? 'The application'} no longer has access to ${revoked.organization_name}. Its tokens stopped working immediately.`;
    }
  }
  sendPage(ctx, deps.environment, 'connections.njk', {
    requestId: ctx.state.requestId,
    user: { email: who.user.email, name: who.user.display_name },
    environmentName,
    connections: rows.map((row) => connectionView(row, environmentName)),
    managesOrganizations: who.adminOf.length > 0,
    organizationsNoun: who.organizationsNoun,
    notice,
    csrf: csrfToken(deps.serverKeys, `session:${who.session.uid}`),
    revokeAction: REVOKE_PATH,
    logoutAction: LOGOUT_PATH,
  });
}

/** POST /oauth/connections/revoke: ends the authorization and every token it issued, at once. */
export async function revokeConnection(deps: InteractionDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const who = await viewer(deps, ctx);
  if (!who) {
    ctx.status = 303;
    ctx.redirect(CONNECTIONS_PATH);
    return;
  }
  verifyCsrf(ctx, deps.serverKeys, `session:${who.session.uid}`, form.csrf, deps.origin);
  const grantId = form.grant ?? '';
  const row = grantId.length > 0 && grantId.length <= 128 ? await findConnection(deps.db, deps.environment, grantId) : undefined;
  // Someone else's authorization, another organization's or another environment's: 404, as if
  // it did not exist, so the answer reveals nothing.
  if (!row || !manages(who, row)) throw new HttpProblem(404, 'Not Found', 'There is no such connected application.');
  if (!row.revoked_at && (await revokeAuthorization(deps.db, deps.environment, row.grant_id, 'revoked_by_user'))) {
    await recordAudit(deps.db, {
      event: 'authorization.revoked',
      environment: deps.environment,
      actorUserId: who.user.id,
      organizationId: row.organization_id,
      clientId: row.client_id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { grant_id: row.grant_id, subject_type: row.subject_type, via: 'connections_page' },
    });
  }
  ctx.status = 303;
  ctx.redirect(`${CONNECTIONS_PATH}?revoked=${encodeURIComponent(row.grant_id)}`);
}

export { viewer as connectionsViewer };
