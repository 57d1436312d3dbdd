import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Environment } from '../db/schema.js';
import { sendPage } from '../views/page.js';
import {
  loadLogoutSession,
  logoutSessionOf,
  logoutXsrf,
  requestEntities,
  type LogoutSession,
  type RequestEntities,
} from './provider-internals.js';

/**
 * The pages of RP-Initiated Logout (docs/oauth.md, "Signing out from an application"), in the
 * hosted pages' style: the provider's logoutSource (a signed-in browser: ask, or sign out at
 * once), its postLogoutSuccessSource (where a sign-out without a registered return address
 * ends) and, for a browser that is not signed in, our page in place of the library's bare
 * auto-submitting form. Every form is the provider's own, to its confirm route, with the
 * xsrf secret it keeps in the session (provider-internals.ts, logoutXsrf).
 */

type IdTokenHint = NonNullable<RequestEntities['IdTokenHint']>;

/**
 * Whether the request's id_token_hint (already verified by the provider: our signature, our
 * issuer, a registered client that is the request's client_id) was issued during this browser
 * session: the same user, issued at or after the session's sign-in (every sign-in starts a new
 * session). Such a request is the application speaking for the signed-in user, and is not
 * asked about (Keycloak's rule; RP-Initiated Logout 1.0, section 2, leaves it to the OP). An
 * older hint, another user's, or none at all gets the confirmation. The session's list of the
 * applications it signed in to is no test: an application that revokes its tokens before
 * sending the browser here (mod_auth_openidc does) has already been taken off it.
 */
function hintIsFromThisSession(hint: IdTokenHint | undefined, session: LogoutSession | undefined): boolean {
  if (!hint || !session?.accountId) return false;
  const { sub, iat } = hint.payload;
  if (typeof iat !== 'number' || typeof session.loginTs !== 'number') return false;
  return sub === session.accountId && iat >= session.loginTs;
}

function formOf(ctx: KoaContextWithOIDC) {
  const session = logoutSessionOf(ctx);
  const returnTo = ctx.oidc.params?.post_logout_redirect_uri;
  return {
    action: ctx.oidc.urlFor('end_session_confirm'),
    xsrf: logoutXsrf(session),
    client: ctx.oidc.client?.clientName ?? null,
    // The confirm route answers with a redirect there; Chromium holds redirects after a form
    // to form-action too (views/page.ts). The provider has already checked it is registered.
    formTargets: typeof returnTo === 'string' ? [returnTo] : [],
  };
}

export function endSessionPages(environment: Environment) {
  /** features.rpInitiatedLogout.logoutSource: a signed-in browser at the end-session endpoint. */
  async function logoutSource(ctx: KoaContextWithOIDC): Promise<void> {
    const { formTargets, ...form } = formOf(ctx);
    const auto = hintIsFromThisSession(requestEntities(ctx).IdTokenHint, logoutSessionOf(ctx));
    sendPage(ctx, environment, 'logout.njk', { ...form, autoSubmit: auto, signedIn: true }, { formTargets });
  }

  /**
   * features.rpInitiatedLogout.postLogoutSuccessSource: where the confirm route sends a browser
   * that has no registered return address. "Stay signed in" ends here too (without one), so the
   * page says which of the two happened.
   */
  async function postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
    const session = await loadLogoutSession(ctx);
    sendPage(ctx, environment, 'signed-out.njk', {
      client: ctx.oidc.client?.clientName ?? null,
      stillSignedIn: Boolean(session.accountId),
    });
  }

  /**
   * A browser that is not signed in gets no logoutSource from the library, which answers with
   * its own page of inline script that posts the form at once. Nothing is left to end, so it
   * is our auto-submitting page instead, with the same form: the confirm route then sends the
   * browser back to the application (with its state) or to the signed-out page.
   */
  function replaceSignedOutForm(): Middleware {
    return async (rawCtx, next) => {
      await next();
      const ctx = rawCtx as unknown as KoaContextWithOIDC;
      if (ctx.oidc?.route !== 'end_session' || ctx.status !== 200 || logoutSessionOf(ctx)?.accountId) return;
      const { formTargets, ...form } = formOf(ctx);
      sendPage(ctx, environment, 'logout.njk', { ...form, autoSubmit: true, signedIn: false }, { formTargets });
    };
  }

  return { logoutSource, postLogoutSuccessSource, replaceSignedOutForm };
}
