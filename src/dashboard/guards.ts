import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import type { Membership } from '../oidc/interactions/organization-page.js';
import { csrfToken, verifyCsrf } from '../http/csrf.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { SIGN_IN_PATH } from './paths.js';
import { currentViewer, type Viewer } from './viewer.js';

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

/**
 * The organization named by the URL (its EIN, dashed or not) that the viewer manages. Not a
 * member of it (or no such organization): 404, as if it did not exist. A member without the
 * Owner or Admin role: 403, whatever the page or form.
 */
export function managedOrganization(viewer: Viewer, einParam: string | undefined): Membership {
  const digits = (einParam ?? '').replace('-', '');
  const membership = viewer.memberships.find((m) => m.ein.replace('-', '') === digits);
  if (!membership) throw notFound('There is no such organization among yours.');
  if (membership.role !== 'owner' && membership.role !== 'admin') {
    throw forbidden(`Your role in ${membership.name} does not allow this. Ask an Owner or Admin of ${membership.name}.`, { title: 'Only Owners and Admins manage the organization' });
  }
  if (membership.requireMfa && !viewer.secondFactor) {
    throw forbidden(`${membership.name} asks every member to sign in with a second factor. Set one up under Security (/account/security), or sign out and sign in again with the one you have.`, { title: `${membership.name} requires a second factor` });
  }
  return membership;
}

/** The CSRF token of the signed-in side's forms: bound to the browser session. */
export function sessionCsrf(deps: InteractionDeps, viewer: Viewer): string {
  return csrfToken(deps.serverKeys, `session:${viewer.session.uid}`);
}

export function verifySessionCsrf(deps: InteractionDeps, ctx: Context, viewer: Viewer, form: Record<string, string>): void {
  verifyCsrf(ctx, deps.serverKeys, `session:${viewer.session.uid}`, form.csrf, deps.origin);
}
