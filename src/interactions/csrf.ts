import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { HttpProblem } from '../http/problem.js';

/**
 * CSRF protection for the hosted forms. The token is an HMAC, under a server key, of what the
 * form acts on, so only a page we rendered for it carries one:
 * - `interaction:<uid>` for login, consent and deny (the interaction cookie names the uid);
 * - `session:<uid>` for the connections page and logout (the provider session);
 * - `signin:<nonce>` for signing in on the connections page, where there is no session yet
 *   (the nonce lives in an HttpOnly SameSite=Strict cookie).
 * On top, a submission a browser marks as cross-site (Sec-Fetch-Site, Origin) is refused.
 */
export type CsrfBinding = `interaction:${string}` | `session:${string}` | `signin:${string}`;

export function csrfToken(key: Buffer, binding: CsrfBinding): string {
  return crypto.createHmac('sha256', key).update('csrf:').update(binding).digest('base64url');
}

/** A form that did not come from our page: 403, rendered as its own page for browsers. */
export class CsrfRejected extends HttpProblem {
  constructor() {
    super(403, 'Forbidden', 'The form could not be verified (missing or invalid CSRF token). Reload the page and try again.', { type: 'https://almoner.dev/problems/csrf' });
  }
}

/**
 * True when the browser says the submission comes from another origin. (With our
 * Referrer-Policy no-referrer, a same-origin POST carries `Origin: null`, so that passes.)
 */
function crossSite(ctx: Context, origin: string): boolean {
  const site = ctx.get('sec-fetch-site');
  const requestOrigin = ctx.get('origin');
  return Boolean((site && site !== 'same-origin' && site !== 'none') || (requestOrigin && requestOrigin !== 'null' && requestOrigin !== origin));
}

export function verifyCsrf(ctx: Context, key: Buffer, binding: CsrfBinding, presented: string | undefined, origin: string): void {
  const expected = Buffer.from(csrfToken(key, binding));
  const given = Buffer.from(presented ?? '');
  // timingSafeEqual needs equal lengths; a length mismatch reveals only the (public) length.
  if (crossSite(ctx, origin) || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) throw new CsrfRejected();
}

/**
 * Refuses every cross-site form post to the hosted pages before anything else is looked at,
 * so a forged submission is answered as what it is, not as an expired sign-in (the
 * SameSite cookies it lacks would otherwise decide the answer).
 */
export function refuseCrossSitePosts(origin: string): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && crossSite(ctx, origin)) throw new CsrfRejected();
    await next();
  };
}
