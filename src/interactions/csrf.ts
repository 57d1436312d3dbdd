import crypto from 'node:crypto';
import type { Context } from 'koa';
import { HttpProblem } from '../http/problem.js';

/**
 * CSRF protection for the hosted forms: a token bound to the interaction (HMAC of its id
 * under a server key), which only a page we rendered for that interaction carries, plus a
 * same-origin check of Origin / Sec-Fetch-Site when the browser sends them.
 */
export function csrfToken(key: Buffer, binding: string): string {
  return crypto.createHmac('sha256', key).update('csrf:').update(binding).digest('base64url');
}

export function verifyCsrf(ctx: Context, key: Buffer, binding: string, presented: string | undefined, origin: string): void {
  const expected = Buffer.from(csrfToken(key, binding));
  const given = Buffer.from(presented ?? '');
  const site = ctx.get('sec-fetch-site');
  const requestOrigin = ctx.get('origin');
  const crossSite = (site && site !== 'same-origin' && site !== 'none') || (requestOrigin && requestOrigin !== 'null' && requestOrigin !== origin);
  if (crossSite || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    throw new HttpProblem(403, 'Forbidden', 'The form could not be verified (missing or invalid CSRF token). Reload the page and try again.');
  }
}
