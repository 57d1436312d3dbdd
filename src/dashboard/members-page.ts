import type { Context } from 'koa';
import { INVITATION_LIFETIME_HOURS, inviteMember, listOpenInvitations, revokeInvitation } from '../accounts/invitations.js';
import { invitationsPerOrganization } from '../limits/rate-limits.js';
import { changeMemberRole, membersOf, removalOutlook, removeMembership } from '../accounts/memberships.js';
import { mayAssignRole } from '../accounts/role-authority.js';
import { ROLES } from '../accounts/service.js';
import type { Role } from '../db/schema.js';
import { conflict, DomainError, forbidden, notFound, rateLimited } from '../errors/domain-error.js';
import { MailDeliveryError } from '../mail/sender.js';
import { ROLE_NAMES, type Membership } from '../identity/memberships.js';
import { shownDate, shownDay } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

/** The roles an actor may give, in the order the pages list them. */
const assignable = (actor: Role) =>
  ROLES.filter((role) => mayAssignRole(actor, role)).map((role) => ({ value: role, label: ROLE_NAMES[role] }));

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface MembersPageState {
  error?: string;
  status?: number;
  /** What the invite form held when it was refused, to show it again. */
  invite?: { email: string; role: string };
}

/** GET /orgs/:ein/members: the organization's staff, with what the viewer may change. */
export async function showMembers(
  deps: DashboardDeps,
  ctx: Context,
  { viewer, organization }: OrgRequest,
  state: MembersPageState = {},
): Promise<void> {
  await renderMembers(deps, ctx, viewer, organization, state);
}

async function renderMembers(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  organization: Membership,
  state: MembersPageState,
): Promise<void> {
  const rows = await membersOf(deps.db, organization.id);
  const actor = organization.role;
  // The only Owner can be neither demoted nor removed (docs/accounts.md, "Roles"): neither is offered, and an Owner is told why.
  const onlyOwner = (role: Role) => role === 'owner' && rows.filter((r) => r.role === 'owner').length === 1;
  const members = rows.map((r) => ({
    id: r.user_id,
    email: r.email,
    name: r.display_name,
    role: r.role,
    roleName: ROLE_NAMES[r.role],
    since: shownDay(r.created_at),
    you: r.user_id === viewer.user.id,
    manageable: mayAssignRole(actor, r.role) && !onlyOwner(r.role),
    onlyOwner: mayAssignRole(actor, r.role) && onlyOwner(r.role),
    removeHref: orgPath(organization.ein, `members/${r.user_id}/remove`),
  }));
  const open = await listOpenInvitations(deps.db, organization.id);
  const invitations = open.map((i) => ({
    id: i.id,
    email: i.email,
    roleName: ROLE_NAMES[i.role],
    invitedBy: i.inviter_email,
    expires: shownDate(i.expires_at),
    // An Admin may not withdraw what only an Owner could have sent.
    revocable: mayAssignRole(actor, i.role),
  }));
  const changed = typeof ctx.query.changed === 'string' ? members.find((m) => m.id === ctx.query.changed) : undefined;
  const invited = typeof ctx.query.invited === 'string' ? open.find((i) => i.id === ctx.query.invited) : undefined;
  const notice = changed
    ? `${changed.email} is now ${changed.roleName}.`
    : ctx.query.removed === '1'
      ? 'The member was removed. Everything they approved as themselves stopped working at once.'
      : invited
        ? `An invitation was sent to ${invited.email}. The link works once, for ${INVITATION_LIFETIME_HOURS} hours.`
        : ctx.query.invitation_revoked === '1'
          ? 'The invitation was withdrawn: its link no longer works.'
          : undefined;
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/members.njk',
    { organization, tab: 'members' },
    {
      members,
      roles: assignable(actor),
      roleAction: orgPath(organization.ein, 'members/role'),
      invitations,
      inviteAction: orgPath(organization.ein, 'members/invite'),
      revokeInvitationAction: orgPath(organization.ein, 'members/invitations/revoke'),
      invite: state.invite ?? { email: '', role: 'member' },
      notice,
      error: state.error,
    },
    state.status,
  );
}

/** The member a form names, in the viewer's organization; 404 for anyone else. */
function namedUser(form: Record<string, string>): string {
  if (!USER_ID.test(form.user ?? '')) throw notFound('There is no such member of this organization.');
  return form.user!;
}

/**
 * Runs a change the service may refuse: a forbidden one is a 403 page (never a silent no-op);
 * one that would leave the organization without an Owner is shown on the members page (409).
 */
async function attempt(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  organization: Membership,
  change: () => Promise<string>,
  invite?: MembersPageState['invite'],
): Promise<void> {
  try {
    const target = await change();
    ctx.status = 303;
    ctx.redirect(target);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'conflict')
      return renderMembers(deps, ctx, viewer, organization, { error: error.sentence, status: 409, invite });
    if (error instanceof DomainError && error.code === 'forbidden')
      throw forbidden(`Your role in ${organization.name} (${ROLE_NAMES[organization.role]}) does not allow it: ${error.message}.`, {
        title: 'You cannot make this change',
      });
    throw error;
  }
}

/** POST /orgs/:ein/members/role: gives a member another role. */
export async function submitRoleChange(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  const userId = namedUser(form);
  await attempt(deps, ctx, viewer, organization, async () => {
    await changeMemberRole(deps.db, {
      organizationId: organization.id,
      userId,
      role: form.role ?? '',
      actor: { userId: viewer.user.id, role: organization.role },
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
    return `${orgPath(organization.ein, 'members')}?changed=${encodeURIComponent(userId)}`;
  });
}

/** GET /orgs/:ein/members/:user/remove: what removing the member ends, and the button that does it. */
export async function showRemoval(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  const userId = namedUser({ user: String(ctx.params.user) });
  const outlook = await removalOutlook(deps.db, organization.id, userId, organization.role);
  if (outlook.kind === 'absent') throw notFound('There is no such member of this organization.');
  const { member } = outlook;
  if (outlook.kind === 'refused')
    throw forbidden(`Your role in ${organization.name} (${ROLE_NAMES[organization.role]}) does not allow removing an Owner.`, {
      title: 'You cannot make this change',
    });
  // Not offered on the members page; an address typed by hand is told why rather than shown a button the service refuses.
  if (outlook.kind === 'only_owner') {
    throw conflict(
      `${member.email} is the only Owner of ${organization.name}: make someone else Owner first, then ${userId === viewer.user.id ? 'you can leave' : 'they can be removed'}.`,
      { title: 'The only Owner cannot be removed' },
    );
  }
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/member-remove.njk',
    { organization, tab: 'members' },
    {
      member: { id: userId, email: member.email, roleName: ROLE_NAMES[member.role], you: userId === viewer.user.id },
      authorizations: outlook.authorizations,
      removeAction: orgPath(organization.ein, 'members/remove'),
      cancel: orgPath(organization.ein, 'members'),
    },
  );
}

/** POST /orgs/:ein/members/remove: removes the member; their user-subject authorizations end with it. */
export async function submitRemoval(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  const userId = namedUser(form);
  await attempt(deps, ctx, viewer, organization, async () => {
    await removeMembership(deps.db, {
      organizationId: organization.id,
      userId,
      actor: { userId: viewer.user.id, role: organization.role },
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
    // Someone who removed themselves no longer manages the organization: their account is where they land.
    return userId === viewer.user.id ? '/account' : `${orgPath(organization.ein, 'members')}?removed=1`;
  });
}

/**
 * POST /orgs/:ein/members/invite: invites an address with a role the viewer may give. The
 * link goes by e-mail, pointing at this dashboard; a refused address is shown again with why.
 */
export async function submitInvitation(deps: DashboardDeps, ctx: Context, { viewer, organization, form }: OrgRequest): Promise<void> {
  const invite = { email: (form.email ?? '').trim(), role: form.role ?? '' };
  // The hourly limit is reserved before anything is sent (docs/accounts.md, "Invitations").
  const decision = await deps.counter.take(invitationsPerOrganization, organization.id);
  if (!decision.allowed) {
    const minutes = Math.ceil(decision.retryAfterSeconds / 60);
    throw rateLimited(
      `${organization.name} has sent ${invitationsPerOrganization.max} invitations in the last hour, the most it may. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      decision.retryAfterSeconds,
      { title: 'Too many invitations' },
    );
  }
  try {
    await attempt(
      deps,
      ctx,
      viewer,
      organization,
      async () => {
        try {
          const created = await inviteMember(deps.db, deps, {
            organizationId: organization.id,
            email: invite.email,
            role: invite.role,
            environment: deps.environment,
            actor: { userId: viewer.user.id, role: organization.role, email: viewer.user.email },
            ip: ctx.state.clientIp,
            requestId: ctx.state.requestId,
          });
          return `${orgPath(organization.ein, 'members')}?invited=${encodeURIComponent(created.id)}`;
        } catch (error) {
          // Nothing was sent: the attempt does not count.
          await deps.counter.succeeded(decision.taken);
          throw error;
        }
      },
      invite,
    );
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid')
      return renderMembers(deps, ctx, viewer, organization, { error: error.sentence, status: 400, invite });
    if (error instanceof MailDeliveryError) {
      // The operator's problem, logged for them (the message names the server, never its credentials); the page says what happened.
      ctx.state.log?.warn({ err: error.message }, 'invitation mail not taken by the mail server');
      ctx.set('Retry-After', '60');
      return renderMembers(deps, ctx, viewer, organization, {
        error: `The invitation could not be sent: the mail server did not take the message to ${invite.email}, so the invitation was withdrawn. Try again in a few minutes; if it keeps failing, tell your Almoner administrator.`,
        status: 503,
        invite,
      });
    }
    throw error;
  }
}

/** POST /orgs/:ein/members/invitations/revoke: withdraws an open invitation of this organization (404 for any other). */
export async function submitInvitationRevocation(
  deps: DashboardDeps,
  ctx: Context,
  { viewer, organization, form }: OrgRequest,
): Promise<void> {
  await attempt(deps, ctx, viewer, organization, async () => {
    await revokeInvitation(deps.db, {
      organizationId: organization.id,
      which: { id: form.invitation ?? '' },
      actor: { userId: viewer.user.id, role: organization.role, email: viewer.user.email },
      ip: ctx.state.clientIp,
      requestId: ctx.state.requestId,
    });
    return `${orgPath(organization.ein, 'members')}?invitation_revoked=1`;
  });
}
