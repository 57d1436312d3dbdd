import type { Context } from 'koa';
import type { Role } from '../db/schema.js';
import { forbidden, notFound } from '../errors/domain-error.js';
import { csrfToken, verifyCsrf } from '../http/csrf.js';
import { readForm } from '../http/form-body.js';
import type { Membership } from '../identity/memberships.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { rememberOrganization } from './error-frame.js';
import { CONFIRM_PATH, orgPath, SIGN_IN_PATH } from './paths.js';
import { currentViewer, type Viewer } from './viewer.js';

/**
 * The guards of the signed-in side, given to every handler by one wrapper instead of being
 * written again in each: a page of the user's own account (`accountRoute`) or of an
 * organization (`orgRoute`). Both send a visitor without a session to the sign-in page (and
 * back afterwards); a form (POST) is read once and its session-bound CSRF token checked; an
 * organization's page also applies the membership, role and second-factor rules.
 */

/** The signed-in user's request: who, and the form when it is a POST ({} otherwise). */
export interface AccountRequest {
  viewer: Viewer;
  form: Record<string, string>;
}

/** An organization's request: the organization the URL names, as the viewer's membership of it. */
export interface OrgRequest extends AccountRequest {
  organization: Membership;
}

type Handler<R> = (ctx: Context, request: R) => Promise<void> | void;

const MANAGERS: readonly Role[] = ['owner', 'admin'];

/**
 * The signed-in user, or (answered here) a redirect to the sign-in page that comes back to
 * this page afterwards. A form posted without a session goes back to its page the same way.
 */
export async function requireViewer(deps: InteractionDeps, ctx: Context, returnTo: string = ctx.path): Promise<Viewer | undefined> {
  const viewer = await currentViewer(deps, ctx);
  if (viewer) return viewer;
  ctx.status = 303;
  ctx.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(returnTo)}`);
  return undefined;
}

/** A form of the user's own account; `returnTo`: where a visitor without a session comes back to (the page of a POST's form). */
export function accountRoute(deps: InteractionDeps, handler: Handler<AccountRequest>, options: { returnTo?: string } = {}) {
  return async (ctx: Context): Promise<void> => {
    const post = ctx.method === 'POST';
    const form = post ? await readForm(ctx) : {};
    const viewer = await requireViewer(deps, ctx, post ? (options.returnTo ?? ctx.path) : ctx.path);
    if (!viewer) return;
    if (post) verifySessionCsrf(deps, ctx, viewer, form);
    await handler(ctx, { viewer, form });
  };
}

/**
 * A page or form of the organization named by the URL's `:ein`. `page`: the organization's tab
 * a visitor without a session comes back to after signing in; `roles`: who may use it
 * (default Owners and Admins).
 */
export function orgRoute(deps: InteractionDeps, options: { page: string; roles?: readonly Role[] }, handler: Handler<OrgRequest>) {
  return async (ctx: Context): Promise<void> => {
    const post = ctx.method === 'POST';
    const form = post ? await readForm(ctx) : {};
    const ein = String(ctx.params.ein ?? '');
    const viewer = await requireViewer(deps, ctx, post ? orgPath(ein, options.page) : ctx.path);
    if (!viewer) return;
    const organization = memberOf(viewer, ein);
    // Its header frames whatever this request answers, a refusal included (error-page.ts).
    rememberOrganization(ctx, organization);
    mayActFor(viewer, organization, options.roles ?? MANAGERS);
    if (post) verifySessionCsrf(deps, ctx, viewer, form);
    await handler(ctx, { viewer, organization, form });
  };
}

/**
 * The organization named by the URL (its EIN, dashed or not), as the viewer's membership of it.
 * Not a member of it (or no such organization): 404, as if it did not exist.
 */
function memberOf(viewer: Viewer, einParam: string | undefined): Membership {
  const digits = (einParam ?? '').replace('-', '');
  const membership = viewer.memberships.find((m) => m.ein.replace('-', '') === digits);
  if (!membership) throw notFound('There is no such organization among yours.');
  return membership;
}

/**
 * Whether the viewer may act for the organization. A role without the right: 403, whatever the
 * page or form. An organization that requires a second factor of its staff, and a session
 * signed in without one: 403.
 */
function mayActFor(viewer: Viewer, membership: Membership, roles: readonly Role[]): void {
  if (!roles.includes(membership.role)) {
    throw forbidden(`Your role in ${membership.name} does not allow this. Ask an Owner or Admin of ${membership.name}.`, {
      title: 'Only Owners and Admins manage the organization',
    });
  }
  if (membership.requireMfa && !viewer.secondFactor) throw secondFactorRequired(membership.name);
}

/** The 403 of an organization whose staff must use a second factor, to a session signed in without one. */
export function secondFactorRequired(name: string) {
  return forbidden(
    `${name} asks every member to use a second factor. If you have one, confirm it is you with it (${CONFIRM_PATH}); if not, set one up under Security (/account/security).`,
    { title: `${name} requires a second factor` },
  );
}

/** The CSRF token of the signed-in side's forms: bound to the browser session. */
export function sessionCsrf(deps: InteractionDeps, viewer: Viewer): string {
  return csrfToken(deps.serverKeys, `session:${viewer.session.uid}`);
}

export function verifySessionCsrf(deps: InteractionDeps, ctx: Context, viewer: Viewer, form: Record<string, string>): void {
  verifyCsrf(ctx, deps.serverKeys, `session:${viewer.session.uid}`, form.csrf, deps.origin);
}
