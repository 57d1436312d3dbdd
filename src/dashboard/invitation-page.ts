import type { Context } from 'koa';
import {
  acceptAsExistingUser,
  acceptAsNewUser,
  findInvitation,
  INVITATION_LIFETIME_HOURS,
  invitationPath,
  maskEmail,
  type Accepted,
  type ClosedReason,
  type InvitationLookup,
  type InvitationRow,
} from '../accounts/invitations.js';
import { MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH } from '../accounts/password-policy.js';
import { formatEin } from '../accounts/ein.js';
import type { Role } from '../db/schema.js';
import { DomainError, conflict, forbidden, gone, notFound } from '../errors/domain-error.js';
import { readForm } from '../http/form-body.js';
import { ROLE_NAMES } from '../identity/memberships.js';
import { startSession } from '../oidc/interactions/provider-session.js';
import { sendPage } from '../views/page.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import { requireViewer, verifySessionCsrf } from './guards.js';
import { proofFor } from '../identity/sessions.js';
import { sendDashboardPage } from './page.js';
import { ACCOUNT_PATH, orgPath, SECURITY_PATH, SIGN_IN_PATH } from './paths.js';
import { clearSignInNonce, signInCsrf, verifySignInCsrf } from './sign-in-page.js';
import { currentViewer, type Viewer } from './viewer.js';

/**
 * The page an invitation's link opens (docs/accounts.md, "Invitations"): a new user sets a
 * password and is signed in; an existing user signs in and accepts. The token is in the path,
 * so these answers are never cached and never sent on as a referrer.
 */
function protectToken(ctx: Context): void {
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

const CLOSED_PAGES: Readonly<Record<ClosedReason, { title: string; text: string }>> = {
  accepted: {
    title: 'This invitation was already used',
    text: 'An invitation link works once, and this one has been accepted. If that was you, sign in with the account you created.',
  },
  revoked: {
    title: 'This invitation was withdrawn',
    text: 'The organization withdrew this invitation (or sent a newer one, which replaces it). Ask the person who invited you for a new invitation.',
  },
  expired: {
    title: 'This invitation has expired',
    text: `Invitation links last ${INVITATION_LIFETIME_HOURS} hours. Ask the person who invited you to send a new one.`,
  },
};

const invitationNotFound = () =>
  notFound(
    'There is no invitation at this address. Check that the whole link was copied, or ask the person who invited you to send it again.',
    { title: 'Invitation not found' },
  );

/** The open invitation of the link, or the 404 / 410 page saying why it does not work. */
async function openInvitation(deps: DashboardDeps, token: string): Promise<Extract<InvitationLookup, { open: true }>> {
  let found: InvitationLookup;
  try {
    found = await findInvitation(deps.db, token, deps.environment);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') throw invitationNotFound();
    throw error;
  }
  if (!found.open) throw gone(CLOSED_PAGES[found.reason].text, { title: CLOSED_PAGES[found.reason].title });
  return found;
}

/** A failure of accepting, as the page shows it (the service's words, with a title). */
function acceptanceProblem(error: unknown, invitation: InvitationRow): unknown {
  if (!(error instanceof DomainError)) return error;
  const detail = error.sentence;
  if (error.code === 'not_found') return invitationNotFound();
  if (error.code === 'gone') return gone(detail, { title: 'This invitation is no longer valid' });
  if (error.code === 'forbidden') return forbidden(detail, { title: 'This invitation is for another account' });
  if (error.code === 'conflict') return conflict(detail, { title: `You could not join ${invitation.organization_name}` });
  return error;
}

/** What each role may do, in the words of docs/accounts.md ("Roles"), for someone deciding to join. */
const ROLE_DESCRIPTIONS: Readonly<Record<Role, string>> = {
  owner:
    'Owners manage everything in the organization: members of every role, API keys, webhooks, connected applications and its settings.',
  admin: 'Admins manage the organization: its members (all but Owners), API keys, webhooks and connected applications.',
  member: 'Members approve applications that read and write the organization’s data, and manage their own account.',
  read_only: 'Read-only users approve applications that only read the organization’s data, and manage their own account.',
};

function summary(invitation: InvitationRow) {
  return {
    organization: { name: invitation.organization_name, ein: formatEin(invitation.organization_ein) },
    email: invitation.email,
    roleName: ROLE_NAMES[invitation.role],
    roleDescription: ROLE_DESCRIPTIONS[invitation.role],
    inviter: invitation.inviter_email ?? 'An Almoner administrator',
    expires: shownDate(invitation.expires_at),
  };
}

interface SetPasswordState {
  error?: string;
  name?: string;
}

function renderSetPassword(
  deps: DashboardDeps,
  ctx: Context,
  token: string,
  invitation: InvitationRow,
  viewer: Viewer | undefined,
  state: SetPasswordState,
  status?: number,
): void {
  sendPage(
    ctx,
    deps.environment,
    'dashboard/invitation.njk',
    {
      requestId: ctx.state.requestId,
      ...summary(invitation),
      action: invitationPath(token),
      csrf: signInCsrf(deps, ctx),
      signedInAs: viewer?.user.email,
      minLength: MIN_PASSWORD_LENGTH,
      maxLength: MAX_PASSWORD_LENGTH,
      name: state.name ?? '',
      error: state.error,
    },
    { status },
  );
}

/**
 * Where someone who just joined lands: the Security page when the organization requires a
 * second factor and this session has none (its pages would refuse them until they set one
 * up), else the organization's pages when they may manage it, else their account.
 */
function landing(accepted: Accepted, secondFactor: boolean): string {
  if (accepted.organization.requireMfa && !secondFactor) return SECURITY_PATH;
  return accepted.role === 'owner' || accepted.role === 'admin' ? orgPath(accepted.organization.ein, 'members') : ACCOUNT_PATH;
}

const tokenOf = (ctx: Context) => String(ctx.params.token ?? '');

/**
 * GET /invitations/:token. No account for the address yet: the set-password form (whoever is
 * signed in). An account: not signed in, to the sign-in page and back; signed in as the
 * invited address, the Accept page; as someone else, a page saying so, with Sign out.
 */
export async function showInvitation(deps: DashboardDeps, ctx: Context): Promise<void> {
  protectToken(ctx);
  const token = tokenOf(ctx);
  const { invitation, userExists } = await openInvitation(deps, token);
  const viewer = await currentViewer(deps, ctx);
  if (!userExists) return renderSetPassword(deps, ctx, token, invitation, viewer, {});
  if (!viewer) {
    ctx.status = 303;
    ctx.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(invitationPath(token))}`);
    return;
  }
  if (viewer.user.email !== invitation.email) {
    sendDashboardPage(
      deps,
      ctx,
      viewer,
      'dashboard/invitation-other-account.njk',
      'account',
      {
        ...summary(invitation),
        email: maskEmail(invitation.email),
        signOutNext: invitationPath(token),
      },
      403,
    );
    return;
  }
  sendDashboardPage(deps, ctx, viewer, 'dashboard/invitation-accept.njk', 'account', {
    ...summary(invitation),
    acceptAction: `${invitationPath(token)}/accept`,
    cancel: ACCOUNT_PATH,
  });
}

/**
 * POST /invitations/:token: the new user's password (twice; the policy of password-policy.ts)
 * and optional name. The form is shown before there is a session, so its CSRF token is bound
 * to the sign-in nonce cookie. On success the browser is signed in (amr pwd) and lands on the
 * organization (Owners, Admins) or the account page.
 */
export async function submitNewUser(deps: DashboardDeps, ctx: Context): Promise<void> {
  protectToken(ctx);
  const form = await readForm(ctx);
  verifySignInCsrf(deps, ctx, form);
  const token = tokenOf(ctx);
  const { invitation, userExists } = await openInvitation(deps, token);
  if (userExists) {
    // The address got an account since the page was shown: accepting is for signed-in users now.
    ctx.status = 303;
    ctx.redirect(invitationPath(token));
    return;
  }
  const password = form.password ?? '';
  const name = (form.name ?? '').trim();
  const viewer = await currentViewer(deps, ctx);
  if (password !== (form.password_repeat ?? ''))
    return renderSetPassword(
      deps,
      ctx,
      token,
      invitation,
      viewer,
      { name, error: 'The two passwords are not the same; type the same password twice.' },
      400,
    );
  let accepted: Accepted;
  try {
    accepted = await acceptAsNewUser(deps.db, deps.passwordParams, {
      token,
      environment: deps.environment,
      password,
      displayName: name,
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid')
      return renderSetPassword(deps, ctx, token, invitation, viewer, { name, error: error.message }, 400);
    if (error instanceof DomainError && error.code === 'conflict') {
      ctx.status = 303;
      ctx.redirect(invitationPath(token));
      return;
    }
    throw acceptanceProblem(error, invitation);
  }
  // A brand-new account: its credentials epoch is the first one.
  await startSession(deps, ctx, proofFor({ id: accepted.userId, credentials_epoch: 0 }, ['pwd']));
  clearSignInNonce(deps, ctx);
  ctx.status = 303;
  // A new account's session was signed in with its password only.
  ctx.redirect(landing(accepted, false));
}

/** POST /invitations/:token/accept: the signed-in invited user joins (session-bound CSRF). */
export async function submitAcceptance(deps: DashboardDeps, ctx: Context): Promise<void> {
  protectToken(ctx);
  const form = await readForm(ctx);
  const token = tokenOf(ctx);
  const viewer = await requireViewer(deps, ctx, invitationPath(token));
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  const { invitation } = await openInvitation(deps, token);
  let accepted: Accepted;
  try {
    accepted = await acceptAsExistingUser(deps.db, {
      token,
      environment: deps.environment,
      user: viewer.user,
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
  } catch (error) {
    throw acceptanceProblem(error, invitation);
  }
  ctx.status = 303;
  ctx.redirect(landing(accepted, viewer.secondFactor));
}
