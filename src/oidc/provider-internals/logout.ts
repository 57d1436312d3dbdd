import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * The provider's session as the end-session pages read it: who is signed in and since when
 * (lib/models/session.js), and the xsrf secret lib/actions/end_session.js keeps in
 * `session.state.secret` and checks on its confirm route, which our logout page's form must
 * carry (end-session-pages.ts). Tripwire: test/oidc/provider-internals.test.ts ("the logout
 * xsrf secret: end_session.js keeps it in session.state.secret and checks the form's xsrf").
 */
export interface LogoutSession {
  accountId?: string;
  uid?: string;
  loginTs?: number;
  state?: { secret?: string };
}

/** The request's provider session as the logout pages read it. */
export function logoutSessionOf(ctx: KoaContextWithOIDC): LogoutSession | undefined {
  return ctx.oidc.session as unknown as LogoutSession | undefined;
}

/** The secret the confirm route expects as the form's xsrf, or '' without one. */
export function logoutXsrf(session: LogoutSession | undefined): string {
  return session?.state?.secret ?? '';
}

/** The browser's session as the provider reads it from its cookie, outside the end-session route itself. */
export async function loadLogoutSession(ctx: KoaContextWithOIDC): Promise<LogoutSession> {
  return (await ctx.oidc.provider.Session.get(ctx)) as unknown as LogoutSession;
}
