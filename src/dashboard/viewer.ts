import type { Context } from 'koa';
import { hasSecondFactor } from '../accounts/authentication-methods.js';
import { findUserIdentity } from '../accounts/repository.js';
import { membershipsOf, type Membership } from '../oidc/interactions/organization-page.js';
import { signedInSession } from '../oidc/interactions/provider-session.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';

type SignedInSession = NonNullable<Awaited<ReturnType<typeof signedInSession>>>;

/** Who is signed in on a dashboard host, read afresh for every request. */
export interface Viewer {
  /** The provider's browser session (shared with the authorization flow). */
  session: SignedInSession;
  user: { id: string; email: string; display_name: string | null };
  /** Every organization the user belongs to, with the role there. */
  memberships: Membership[];
  /** The organizations the user manages (Owner or Admin). */
  manages: Membership[];
  /** The session was signed in with a second factor (or stepped up to one). */
  secondFactor: boolean;
}

/**
 * The signed-in user of this request, or undefined: no session, or a session whose user has
 * since been disabled or deleted (such a session is worth nothing).
 */
export async function currentViewer(deps: InteractionDeps, ctx: Context): Promise<Viewer | undefined> {
  const session = await signedInSession(deps, ctx);
  const user = session ? await findUserIdentity(deps.db, session.accountId) : undefined;
  if (!session || !user || user.disabled_at) return undefined;
  const memberships = await membershipsOf(deps, ctx, user.id);
  return {
    session,
    user: { id: user.id, email: user.email, display_name: user.display_name },
    memberships,
    manages: memberships.filter((m) => m.role === 'owner' || m.role === 'admin'),
    secondFactor: hasSecondFactor((session as { amr?: string[] }).amr),
  };
}
