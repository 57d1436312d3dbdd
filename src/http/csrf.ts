import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { CSRF_PROBLEM_TYPE, HttpProblem } from './problem.js';
import type { ServerKeys } from '../keys/server-keys.js';

/**
 * CSRF protection for the hosted forms. The token is an HMAC, under a server key, of what the
 * form acts on, so only a page we rendered for it carries one:
 * - `interaction:<uid>` for login, consent and deny (the interaction cookie names the uid);
 * - `session:<uid>` for the connections page and logout (the provider session);
 * - `signin:<nonce>` for signing in on the connections page, where there is no session yet
 *   (the nonce lives in an HttpOnly SameSite=Strict cookie);
 * - `pending:<user>:<expiry>:<purpose>` signs the cookie of a sign-in waiting for its second
 *   factor (identity/pending-sign-in.ts), not a form;
 * - `donor-flow:<nonce>` for the donor flow's forms (the nonce lives in the flow's sealed cookie).
 * On top, a submission a browser marks as cross-site (Sec-Fetch-Site, Origin) is refused.
 * The key rotates (`csrf_key`, see keys/server-keys.ts): a token is `<kid>.<mac>`, and a
 * token of an older version verifies until that version ages out. A token without a kid
 * (rendered before versions existed) is checked against every live version.
 */
export type CsrfBinding = `interaction:${string}` | `session:${string}` | `signin:${string}` | `pending:${string}` | `donor-flow:${string}`;

function mac(key: Buffer, binding: CsrfBinding): string {
  return crypto.createHmac('sha256', key).update('csrf:').update(binding).digest('base64url');
}

export function csrfToken(keys: ServerKeys, binding: CsrfBinding): string {
  const version = keys.signing('csrf_key');
  return `${version.kid}.${mac(version.bytes, binding)}`;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // timingSafeEqual needs equal lengths; a length mismatch reveals only the (public) length.
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export function validToken(keys: ServerKeys, binding: CsrfBinding, presented: string): boolean {
  const dot = presented.indexOf('.');
  const kid = dot === -1 ? undefined : presented.slice(0, dot);
  const given = dot === -1 ? presented : presented.slice(dot + 1);
  return keys
    .verifying('csrf_key')
    .filter((version) => kid === undefined || version.kid === kid)
    .some((version) => equal(given, mac(version.bytes, binding)));
}

/** A form that did not come from our page: 403, rendered as its own page for browsers. */
export class CsrfRejected extends HttpProblem {
  constructor() {
    super(403, 'Forbidden', 'The form could not be verified (missing or invalid CSRF token). Reload the page and try again.', {
      type: CSRF_PROBLEM_TYPE,
    });
  }
}

/**
 * True when the browser says the submission comes from another origin. (With our
 * Referrer-Policy no-referrer, a same-origin POST carries `Origin: null`, so that passes.)
 */
function crossSite(ctx: Context, origin: string): boolean {
  const site = ctx.get('sec-fetch-site');
  const requestOrigin = ctx.get('origin');
  return Boolean(
    (site && site !== 'same-origin' && site !== 'none') || (requestOrigin && requestOrigin !== 'null' && requestOrigin !== origin),
  );
}

export function verifyCsrf(ctx: Context, keys: ServerKeys, binding: CsrfBinding, presented: string | undefined, origin: string): void {
  if (crossSite(ctx, origin) || !presented || !validToken(keys, binding, presented)) throw new CsrfRejected();
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
