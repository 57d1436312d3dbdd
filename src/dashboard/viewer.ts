import type { Context } from 'koa';
import { hasSecondFactor } from '../accounts/authentication-methods.js';
import { UseDebounce } from '../audit/use-debounce.js';
import { touchBrowserSession } from '../identity/browser-sessions-repository.js';
import { manages, membershipsOfUser, type Membership } from '../identity/memberships.js';
import { liveSessionUser, provedFactorRecently } from '../identity/sessions.js';
import { signedInSession } from '../oidc/interactions/provider-session.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { rememberViewer } from './error-frame.js';

type SignedInSession = NonNullable<Awaited<ReturnType<typeof signedInSession>>>;

/** Who is signed in on a dashboard host, read afresh for every request. */
export interface Viewer {
  /** The provider's browser session (shared with the authorization flow). */
  session: SignedInSession;
  /** Our record of the session (the Security page's list names it by this id). */
  sessionId: string;
  user: { id: string; email: string; display_name: string | null };
  /** Every organization the user belongs to, with the role there. */
  memberships: Membership[];
  /** The organizations the user manages (Owner or Admin). */
  manages: Membership[];
  /**
   * The organizations this session may act for as their Owner or Admin: those it manages whose
   * second-factor rule it meets (docs/accounts.md, "Second factors").
   */
  actsFor: Membership[];
  /** The session was signed in with a second factor (or stepped up to one). */
  secondFactor: boolean;
  /** The session proved a second factor in the last 10 minutes (factor changes need it). */
  recentFactorProof: boolean;
}

/** last_seen_at of a session is written at most every 5 minutes per process. */
const seen = new UseDebounce(300_000);

/**
 * The signed-in user of this request, or undefined: no session, or a session that no longer
 * counts (its user disabled or deleted, or their credentials changed since it was signed in:
 * docs/accounts.md, "Sessions").
 */
export async function currentViewer(deps: InteractionDeps, ctx: Context): Promise<Viewer | undefined> {
  const session = await signedInSession(deps, ctx);
  const user = session ? await liveSessionUser(deps.db, deps.environment, session) : undefined;
  if (!session || !user) return undefined;
  if (seen.due(user.sessionId)) await touchBrowserSession(deps.db, user.sessionId);
  const memberships = await membershipsOfUser(deps.db, user.id);
  const secondFactor = hasSecondFactor((session as { amr?: string[] }).amr);
  const managed = memberships.filter(manages);
  const viewer: Viewer = {
    session,
    sessionId: user.sessionId,
    user: { id: user.id, email: user.email, display_name: user.display_name },
    memberships,
    manages: managed,
    actsFor: managed.filter((m) => !m.requireMfa || secondFactor),
    secondFactor,
    recentFactorProof: provedFactorRecently(user.factor_proved_at),
  };
  // An error later in this request is shown inside the dashboard (error-page.ts).
  rememberViewer(ctx, viewer);
  return viewer;
}
