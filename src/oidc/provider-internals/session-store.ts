import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { SessionStore, StoredSession } from '../../identity/session-lifecycle.js';

/** The provider's Session model instance (lib/models/session.js). */
export type ProviderSession = Awaited<ReturnType<Provider['Session']['get']>>;

/**
 * identity/session-lifecycle.ts's SessionStore over oidc-provider's own Session and its cookie,
 * so the hosted pages outside the authorization flow (the dashboard, sign-out) share the
 * browser session the provider reads and rotates. What this relies on beyond the public
 * model API (Session.get/save/destroy, cookieName):
 *  - `Session.get(ctx)` answers a new, unsaved session (`new: true`) when the cookie names none
 *    (lib/models/session.js);
 *  - `new provider.Session()` with `loginAccount({accountId, amr, acr, loginTs})` builds a
 *    signed-in session with a fresh jti and uid, and the session cookie's value is its `jti`;
 *  - `provider.createContext(req, res).cookies` is a cookie jar signed with the provider's
 *    cookie keys (the Koa app's `keys`), whose `secure` flag may be set;
 *  - a saved session keeps `amr`, `acr` and `exp` as plain fields the next save writes.
 * Tripwire: test/oidc/provider-internals.test.ts ("the provider's session and its cookie: a new
 * Session signed in with loginAccount, saved, its jti in cookieName('session'), found again by Session.get").
 */
export function providerSessionStore(
  provider: Provider,
  cookie: { secure: boolean; options: Record<string, unknown> },
): SessionStore<ProviderSession & StoredSession> {
  type S = ProviderSession & StoredSession;
  const jar = (ctx: Context) => {
    const cookies = provider.createContext(ctx.req, ctx.res).cookies as unknown as {
      secure: boolean;
      set(name: string, value: string | null, options: object): void;
    };
    // The provider's own routes get a trusted X-Forwarded-Proto from our mount; here the
    // configured origin decides, so a Secure cookie is never refused or downgraded.
    cookies.secure = cookie.secure;
    return cookies;
  };
  return {
    async find(ctx) {
      const session = await provider.Session.get(ctx);
      return (session as { new?: boolean }).new ? undefined : (session as S);
    },
    create(login) {
      const session = new provider.Session();
      session.loginAccount(login);
      return session as S;
    },
    setCookie(ctx, session, maxAgeSeconds) {
      const options = maxAgeSeconds === undefined ? cookie.options : { ...cookie.options, maxAge: maxAgeSeconds * 1000 };
      jar(ctx).set(provider.cookieName('session'), session ? session.jti : null, options);
    },
  };
}

/**
 * The provider session a browser request's cookie names, read before the provider so the
 * request's unit of work can read its row up front (stack/provider-stack.ts): the session cookie
 * is `cookieName('session')`, signed with the same keys as our app's cookies, and its value is
 * the Session's id (lib/models/session.js, Session.get). Tripwire: the session test named above.
 */
export function sessionIdOfRequest(provider: Provider, ctx: Context): string | undefined {
  return ctx.cookies.get(provider.cookieName('session'), { signed: true });
}
