import crypto from 'node:crypto';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment, Role } from '../db/schema.js';
import { conflict, forbidden, gone, invalid, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { renderMail } from '../mail/render.js';
import type { MailSender } from '../mail/sender.js';
import { formatEin } from './ein.js';
import * as invitations from './invitations-repository.js';
import type { MembershipActor, RequestTrace } from './memberships.js';
import { hashPassword, type PasswordParams } from './passwords.js';
import { requireAcceptablePassword } from './password-policy.js';
import * as repo from './repository.js';
import { mayAssignRole } from './role-authority.js';
import { normaliseEmail, requireRole } from './service.js';

/**
 * Invitations (docs/accounts.md, "Invitations"): an Owner or Admin (or the maker's CLI, actor
 * null) invites an address with a role; the link's token is 32 random bytes, stored only as
 * its SHA-256, good once for 72 hours on the dashboard of the environment it was sent from.
 * Inviting an address that has an open invitation replaces it (the old link stops working).
 */
export const INVITATION_LIFETIME_HOURS = 72;

const ROLE_WORDS: Readonly<Record<Role, string>> = { owner: 'Owner', admin: 'Admin', member: 'Member', read_only: 'Read-only' };

/** The path of an invitation's page on a dashboard host. */
export const invitationPath = (token: string) => `/invitations/${token}`;

/** A token as the link carries it: 32 bytes, base64url without padding. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** Who invites: a signed-in Owner or Admin (with their address, for the e-mail), or null for the maker's CLI. */
export type InvitationActor = (MembershipActor & { email: string }) | null;

/** Where the e-mail goes and which dashboard its link points at. */
export interface InvitationMailer {
  mail: MailSender;
  dashboardOrigins: Readonly<Record<Environment, string>>;
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  environment: Environment;
  expiresAt: Date;
  /**
   * The address already has an account: the link asks them to sign in and accept. For the
   * maker's CLI only; an inviter on the dashboard is never told.
   */
  existingUser: boolean;
  /** An open invitation of the same address was revoked by this one. */
  replaced: boolean;
}

const trace = (actor: InvitationActor, t: RequestTrace) => ({
  actorUserId: actor?.userId ?? null,
  ip: t.ip ?? null,
  requestId: t.requestId ?? null,
});

/** An Owner invites any role, an Admin any but Owner (role-authority.ts); Members and Read-only users invite nobody. */
function requireMayInvite(actor: InvitationActor, role: Role): void {
  if (!actor) return;
  if (actor.role !== 'owner' && actor.role !== 'admin') throw forbidden('only Owners and Admins invite members');
  if (!mayAssignRole(actor.role, role)) throw forbidden('only an Owner can invite an Owner');
}

/**
 * Inviting an address again replaces its open invitation, which withdraws it: that needs the
 * right to revoke it (revokeInvitation's rule), or an Admin could withdraw an invitation to
 * become Owner by inviting the address as a Member. An expired one withdraws nothing and may be
 * replaced by whoever may invite.
 */
function requireMayReplace(actor: InvitationActor, open: { role: Role } | undefined): void {
  if (actor && open && !mayAssignRole(actor.role, open.role))
    throw forbidden('the address has an open invitation to become Owner, which only an Owner can withdraw or replace');
}

/**
 * Invites an address. The invitation (replacing an open one of the address) is committed
 * first, under the organization's lock, then the e-mail is sent: never while the transaction
 * holds a connection and the lock (the dev mail sink writes through a connection of its own).
 * When the mail server refuses the message, the new invitation is withdrawn at once (audited,
 * reason `mail_failed`) and the error is the answer: no invitation nobody was told about lingers.
 */
export async function inviteMember(
  db: Db,
  mailer: InvitationMailer,
  input: { organizationId: string; email: string; role: string; environment: Environment; actor: InvitationActor } & RequestTrace,
): Promise<InvitationView> {
  const email = normaliseEmail(input.email);
  const role = requireRole(input.role);
  requireMayInvite(input.actor, role);
  const token = crypto.randomBytes(32).toString('base64url');
  const who = trace(input.actor, input);
  const created = await inTransaction(db, async (trx) => {
    // The organization's lock orders this against membership changes and other invitations of it.
    if (!(await repo.lockOrganization(trx, input.organizationId))) throw notFound('no such organization');
    const org = (await repo.findOrganizationById(trx, input.organizationId))!;
    const user = await repo.findUserByEmail(trx, email);
    if (user && (await repo.findMembership(trx, org.id, user.id)))
      throw conflict(`the address ${email} is already a member of ${org.name}`);
    requireMayReplace(input.actor, await invitations.findOpenInvitationOf(trx, org.id, { email }));
    const previous = await invitations.revokeOpenInvitationOf(trx, org.id, email);
    const expiresAt = new Date(Date.now() + INVITATION_LIFETIME_HOURS * 3600_000);
    const row = await invitations
      .insertInvitation(trx, {
        organization_id: org.id,
        email,
        role,
        token_hash: hashToken(token),
        environment: input.environment,
        invited_by: input.actor?.userId ?? null,
        expires_at: expiresAt,
      })
      .catch((error) =>
        mapUniqueViolation(error, { invitations_open_key: `${email} was invited to ${org.name} at the same moment; try again` }),
      );
    if (previous)
      await recordAudit(trx, {
        event: 'invitation.revoked',
        environment: input.environment,
        organizationId: org.id,
        ...who,
        details: { invitation_id: previous.id, email, role: previous.role, reason: 'replaced', replaced_by: row.id },
      });
    await recordAudit(trx, {
      event: 'invitation.created',
      environment: input.environment,
      organizationId: org.id,
      ...who,
      // actor_user_id is null when the maker's admin CLI invited; `via` says so in words. Nothing
      // says whether the address has an account: every Owner and Admin reads this trail, and
      // could learn it of any address by inviting it (docs/security.md, "Learning who has an
      // account by inviting them").
      details: { invitation_id: row.id, email, role, expires_at: expiresAt.toISOString(), via: input.actor ? 'dashboard' : 'admin_cli' },
    });
    return { org, row, existingUser: Boolean(user), replaced: Boolean(previous), expiresAt };
  });
  const message = renderMail(created.existingUser ? 'invitation-existing-user' : 'invitation-new-user', {
    inviter: input.actor?.email ?? 'An Almoner administrator',
    organization: created.org.name,
    ein: formatEin(created.org.ein),
    roleName: ROLE_WORDS[role],
    email,
    sandbox: input.environment === 'sandbox',
    link: `${mailer.dashboardOrigins[input.environment]}${invitationPath(token)}`,
    expires: `${created.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    hours: INVITATION_LIFETIME_HOURS,
  });
  try {
    await mailer.mail.send({ to: email, subject: message.subject, text: message.text });
  } catch (error) {
    await inTransaction(db, async (trx) => {
      await invitations.markInvitationRevoked(trx, created.row.id);
      await recordAudit(trx, {
        event: 'invitation.revoked',
        environment: input.environment,
        organizationId: created.org.id,
        ...who,
        details: { invitation_id: created.row.id, email, role, reason: 'mail_failed' },
      });
    });
    throw error;
  }
  return {
    id: created.row.id,
    email,
    role,
    environment: input.environment,
    expiresAt: created.expiresAt,
    existingUser: created.existingUser,
    replaced: created.replaced,
  };
}

/** The organization's invitations still open (not accepted, revoked or expired), newest first. */
export function listOpenInvitations(db: Db, organizationId: string) {
  return invitations.listOpenInvitationsOf(db, organizationId);
}

/**
 * Revokes an open invitation of this organization (by id from the members page, by address from
 * the CLI); anything else, another organization's included, is 404. An Admin cannot revoke an
 * invitation to become Owner, as they could not have made it.
 */
export async function revokeInvitation(
  db: Db,
  input: { organizationId: string; which: { id: string } | { email: string }; actor: InvitationActor } & RequestTrace,
): Promise<{ id: string; email: string; role: Role; environment: Environment }> {
  const which = 'email' in input.which ? { email: normaliseEmail(input.which.email) } : input.which;
  if ('id' in which && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(which.id))
    throw notFound('there is no such open invitation');
  return inTransaction(db, async (trx) => {
    const open = await invitations.findOpenInvitationOf(trx, input.organizationId, which);
    if (!open) throw notFound('there is no such open invitation');
    requireMayInvite(input.actor, open.role);
    await invitations.markInvitationRevoked(trx, open.id);
    await recordAudit(trx, {
      event: 'invitation.revoked',
      environment: open.environment,
      organizationId: input.organizationId,
      ...trace(input.actor, input),
      details: { invitation_id: open.id, email: open.email, role: open.role, via: input.actor ? 'dashboard' : 'admin_cli' },
    });
    return open;
  });
}

export type InvitationRow = NonNullable<Awaited<ReturnType<typeof invitations.findInvitationByTokenHash>>>;

/** Why a link no longer works, in words for the person who opened it. */
export type ClosedReason = 'accepted' | 'revoked' | 'expired';

export type InvitationLookup =
  { open: true; invitation: InvitationRow; userExists: boolean } | { open: false; reason: ClosedReason; invitation: InvitationRow };

/**
 * The invitation a link names on this environment's dashboard. Malformed, unknown, or for the
 * other environment's dashboard: not_found. The stored hash is compared again in constant time
 * (the lookup found it by equality; the comparison costs nothing and keeps the rule simple).
 */
export async function findInvitation(db: Db, token: string, environment: Environment): Promise<InvitationLookup> {
  if (!TOKEN_SHAPE.test(token)) throw notFound('there is no such invitation');
  const hash = hashToken(token);
  const row = await invitations.findInvitationByTokenHash(db, hash);
  if (!row || row.environment !== environment || !crypto.timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(hash)))
    throw notFound('there is no such invitation');
  if (row.accepted_at) return { open: false, reason: 'accepted', invitation: row };
  if (row.revoked_at) return { open: false, reason: 'revoked', invitation: row };
  if (row.expires_at.getTime() <= Date.now()) return { open: false, reason: 'expired', invitation: row };
  return { open: true, invitation: row, userExists: Boolean(await repo.findUserByEmail(db, row.email)) };
}

const CLOSED_MESSAGES: Readonly<Record<ClosedReason, string>> = {
  accepted: 'this invitation was already used; sign in instead',
  revoked: 'this invitation was withdrawn; ask the person who invited you for a new one',
  expired: `this invitation has expired (invitations last ${INVITATION_LIFETIME_HOURS} hours); ask the person who invited you for a new one`,
};

/** The open invitation a link names, or the 404/410 saying why there is none. */
async function requireOpenInvitation(db: Db, token: string, environment: Environment) {
  const found = await findInvitation(db, token, environment);
  if (!found.open) throw gone(CLOSED_MESSAGES[found.reason]);
  return found;
}

/** The 410 of a link that was good when the page was shown but lost a race (used, revoked or expired since). */
const lostRace = () => gone('this invitation is no longer valid: it was used, withdrawn or has expired');

export interface Accepted {
  userId: string;
  email: string;
  /** `requireMfa`: the organization asks every member for a second factor (docs/accounts.md, "Settings"). */
  organization: { id: string; ein: string; name: string; requireMfa: boolean };
  role: Role;
}

/**
 * A new user accepts: their account (argon2id; the password policy applies), their membership
 * and the invitation's consumption in one transaction. The conditional consume comes first,
 * so of concurrent submissions of one link exactly one creates the account; the others get 410.
 */
export async function acceptAsNewUser(
  db: Db,
  params: PasswordParams,
  input: { token: string; environment: Environment; password: string; displayName?: string } & RequestTrace,
): Promise<Accepted> {
  const { invitation, userExists } = await requireOpenInvitation(db, input.token, input.environment);
  if (userExists) throw conflict(`an account for ${invitation.email} already exists: sign in to accept the invitation`);
  requireAcceptablePassword(input.password, invitation.email);
  const displayName = input.displayName?.trim() || null;
  if (displayName && displayName.length > 200) throw invalid('Your name can be at most 200 characters.');
  const passwordHash = await hashPassword(input.password, params);
  return inTransaction(db, async (trx) => {
    const consumed = await invitations.consumeInvitation(trx, invitation.id);
    if (!consumed) throw lostRace();
    const user = await invitations
      .insertInvitedUser(trx, { email: consumed.email, password_hash: passwordHash, display_name: displayName })
      .catch((error) =>
        mapUniqueViolation(error, { users_email_key: `an account for ${consumed.email} already exists: sign in to accept the invitation` }),
      );
    await invitations.recordAcceptedBy(trx, consumed.id, user.id);
    await repo.insertMembership(trx, { organization_id: consumed.organization_id, user_id: user.id, role: consumed.role });
    const who = {
      environment: input.environment,
      organizationId: consumed.organization_id,
      actorUserId: user.id,
      ip: input.ip ?? null,
      requestId: input.requestId ?? null,
    };
    await recordAudit(trx, {
      event: 'user.created',
      actorUserId: user.id,
      ip: input.ip ?? null,
      requestId: input.requestId ?? null,
      details: { email: user.email, via: 'invitation' },
    });
    await recordAudit(trx, {
      event: 'invitation.accepted',
      ...who,
      details: { invitation_id: consumed.id, email: user.email, role: consumed.role, new_user: true },
    });
    await recordAudit(trx, {
      event: 'membership.added',
      ...who,
      details: { user_id: user.id, email: user.email, role: consumed.role, via: 'invitation' },
    });
    return {
      userId: user.id,
      email: user.email,
      organization: {
        id: consumed.organization_id,
        ein: formatEin(invitation.organization_ein),
        name: invitation.organization_name,
        requireMfa: invitation.organization_require_mfa,
      },
      role: consumed.role,
    };
  });
}

/**
 * A signed-in user accepts an invitation sent to their own address: the membership is added
 * and the invitation consumed in one transaction. Another user's session gets 403 (the page
 * says whose address it is for, masked); an existing membership is 409 and the link stays open.
 */
export async function acceptAsExistingUser(
  db: Db,
  input: { token: string; environment: Environment; user: { id: string; email: string } } & RequestTrace,
): Promise<Accepted> {
  const { invitation } = await requireOpenInvitation(db, input.token, input.environment);
  if (invitation.email !== input.user.email) throw forbidden(`this invitation is for another address (${maskEmail(invitation.email)})`);
  return inTransaction(db, async (trx) => {
    const consumed = await invitations.consumeInvitation(trx, invitation.id);
    if (!consumed) throw lostRace();
    if (await repo.findMembership(trx, consumed.organization_id, input.user.id))
      throw conflict(`you are already a member of ${invitation.organization_name}`);
    await invitations.recordAcceptedBy(trx, consumed.id, input.user.id);
    await repo.insertMembership(trx, { organization_id: consumed.organization_id, user_id: input.user.id, role: consumed.role });
    const who = {
      environment: input.environment,
      organizationId: consumed.organization_id,
      actorUserId: input.user.id,
      ip: input.ip ?? null,
      requestId: input.requestId ?? null,
    };
    await recordAudit(trx, {
      event: 'invitation.accepted',
      ...who,
      details: { invitation_id: consumed.id, email: input.user.email, role: consumed.role, new_user: false },
    });
    await recordAudit(trx, {
      event: 'membership.added',
      ...who,
      details: { user_id: input.user.id, email: input.user.email, role: consumed.role, via: 'invitation' },
    });
    return {
      userId: input.user.id,
      email: input.user.email,
      organization: {
        id: consumed.organization_id,
        ein: formatEin(invitation.organization_ein),
        name: invitation.organization_name,
        requireMfa: invitation.organization_require_mfa,
      },
      role: consumed.role,
    };
  });
}

/**
 * An address shown to someone who may not be its owner (the invitation is for another
 * account): the first letter of the local part and the domain, `j•••@example.org`.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  return `${local.slice(0, 1)}•••${email.slice(at)}`;
}
