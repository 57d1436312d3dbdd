import type { Context } from 'koa';
import { notFound } from '../errors/domain-error.js';
import { readForm } from '../http/form-body.js';
import type { FdxConsentStatus } from '../authorizations/fdx-consent.js';
import { CLUSTER_WORDS } from '../authorizations/fdx-consent-words.js';
import { findConsentsOfGrants, type ConsentWithAccounts } from '../authorizations/fdx-consents.js';
import { KIND_LABELS } from '../identity/memberships.js';
import { describeScopes } from '../oidc/interactions/scope-descriptions.js';
import {
  connectionOf,
  managedConnections,
  revokeConnectionOnPage,
  type ConnectionRow,
  type RevocationPage,
} from './connections-service.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import { verifySessionCsrf } from './guards.js';
import { sendDashboardPage, type Section } from './page.js';
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

/** Each status as shown (its tag's tone), and what its expiry is called then. */
const CONSENT_STATUS: Readonly<Record<FdxConsentStatus, { text: string; tone: string; expiry: string }>> = {
  PENDING: { text: 'Not yet collected', tone: 'warn', expiry: 'Lapses unless collected by' },
  ACTIVE: { text: 'Active', tone: 'ok', expiry: 'Expires' },
  EXPIRED: { text: 'Expired', tone: 'warn', expiry: 'Expired' },
  REVOKED: { text: 'Revoked', tone: 'bad', expiry: 'Was to expire' },
};

/**
 * What a bank-data (FDX) consent shares, for the connected applications pages: its status, the
 * accounts (a deleted one said to be), the data in plain words, how far back and until when.
 */
function bankDataView({ consent, accounts }: ConsentWithAccounts) {
  const clusters = [...new Set(consent.resources.flatMap((r) => r.dataClusters))];
  return {
    status: CONSENT_STATUS[consent.status],
    accounts: accounts.map((a) =>
      a.account ? { ...a.account, deleted: false } : { label: 'An account since deleted', masked: '', closed: false, deleted: true },
    ),
    data: clusters.map((cluster) => CLUSTER_WORDS[cluster]),
    lookback:
      consent.lookbackPeriod === 0
        ? 'None: only activity from the approval on'
        : `${consent.lookbackPeriod} day${consent.lookbackPeriod === 1 ? '' : 's'} of past activity`,
    expires: shownDate(consent.expiresAt),
    revoked: shownDate(consent.revokedAt),
  };
}

/** The FDX consents of the listed authorizations, by grant id (two queries for the whole page). */
export function consentsOf(deps: DashboardDeps, rows: readonly ConnectionRow[]): Promise<Map<string, ConsentWithAccounts>> {
  return findConsentsOfGrants(
    deps.db,
    deps.environment,
    rows.map((row) => row.grant_id),
  );
}

export function connectionView(row: ConnectionRow, environment: string, consent?: ConsentWithAccounts) {
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
    bankData: consent && bankDataView(consent),
  };
}

/**
 * Ends an authorization (and a bank-data consent it holds) with its audit rows naming the
 * viewer: connections-service.ts.
 */
export async function revokeConnectionRow(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  row: ConnectionRow,
  via: RevocationPage,
): Promise<void> {
  await revokeConnectionOnPage(deps.db, deps.environment, row, via, {
    userId: viewer.user.id,
    ip: ctx.state.clientIp ?? null,
    requestId: ctx.state.requestId ?? null,
  });
}

/**
 * The page that asks before an application's access is revoked, on either connected
 * applications page (docs/oauth.md, "Connected applications"), as an API key's revocation does:
 * what the access is, what revoking ends, and the form (with the session's CSRF token) that does it.
 */
export async function sendRevocationConfirmation(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  section: Section,
  row: ConnectionRow,
  targets: { revokeAction: string; cancel: string },
): Promise<void> {
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const consent = (await consentsOf(deps, [row])).get(row.grant_id);
  sendDashboardPage(deps, ctx, viewer, 'dashboard/connection-revoke.njk', section, {
    connection: { ...connectionView(row, environmentName, consent), yours: row.user_id === viewer.user.id },
    ...targets,
  });
}

/** What the page says once an authorization was revoked here (a bank-data consent's end too). */
export async function revokedNotice(deps: DashboardDeps, row: ConnectionRow): Promise<string> {
  const consent = (await consentsOf(deps, [row])).get(row.grant_id)?.consent;
  const bankData = consent?.status === 'REVOKED' ? ' Its bank-data consent is revoked, and the application is told so when it asks.' : '';
  return `${row.client_name ?? 'The application'} no longer has access to ${row.organization_name}. Its tokens stopped working immediately.${bankData}`;
}

/** GET /oauth/connections: the list, or the sign-in form when nobody is signed in. */
export async function showConnections(deps: DashboardDeps, ctx: Context): Promise<void> {
  const viewer = await currentViewer(deps, ctx);
  if (!viewer)
    return showSignIn(deps, ctx, { next: CONNECTIONS_PATH, notice: ctx.query.signed_out === '1' ? 'You are signed out.' : undefined });
  const environmentName = deps.environment === 'sandbox' ? 'Sandbox' : 'Production';
  const rows = await managedConnections(deps.db, deps.environment, viewer.user.id, adminOf(viewer));
  const consents = await consentsOf(deps, rows);
  let notice: string | undefined;
  if (typeof ctx.query.revoked === 'string' && ctx.query.revoked.length <= 128) {
    const revoked = await connectionOf(deps.db, deps.environment, ctx.query.revoked);
    if (revoked?.revoked_at && manages(viewer, revoked)) {
      notice = await revokedNotice(deps, revoked);
    }
  }
  sendDashboardPage(deps, ctx, viewer, 'connections.njk', 'connections', {
    connections: rows.map((row) => connectionView(row, environmentName, consents.get(row.grant_id))),
    managesOrganizations: viewer.manages.length > 0,
    needSecondFactor: viewer.manages.filter((m) => !viewer.actsFor.includes(m)).map((m) => m.name),
    confirmHref: `${CONFIRM_PATH}?next=${encodeURIComponent(CONNECTIONS_PATH)}`,
    organizationsNoun: organizationsNoun(viewer),
    notice,
    revokeAction: REVOKE_PATH,
  });
}

/** A live authorization the viewer may revoke here; anything else is 404, as if it did not exist (it reveals nothing). */
async function managedConnection(deps: DashboardDeps, viewer: Viewer, grantId: string): Promise<ConnectionRow> {
  const row = grantId.length > 0 && grantId.length <= 128 ? await connectionOf(deps.db, deps.environment, grantId) : undefined;
  if (!row || !manages(viewer, row)) throw notFound('There is no such connected application.');
  return row;
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
  // Someone else's authorization, another organization's or another environment's: 404.
  const row = await managedConnection(deps, viewer, form.grant ?? '');
  await revokeConnectionRow(deps, ctx, viewer, row, 'connections_page');
  ctx.status = 303;
  ctx.redirect(`${CONNECTIONS_PATH}?revoked=${encodeURIComponent(row.grant_id)}`);
}
