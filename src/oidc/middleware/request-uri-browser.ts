import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Db } from '../../db/database.js';
import { hashId } from '../../db/provider-store.js';
import type { Environment } from '../../db/schema.js';
import { oauthErrorPage, sendErrorPage } from '../../http/problem.js';
import { errorPageLayout } from '../../views/page.js';
import { claimPushedRequest } from '../pushed-request-browsers-repository.js';

/**
 * A pushed request (RFC 9126) belongs to the first browser that opens it (docs/bank-data.md,
 * "Pushed authorization requests"): the authorization endpoint marks each browser with a random
 * cookie and claims the request_uri for that mark, atomically, before the provider starts a
 * sign-in. A reload in that browser goes on; any other browser is refused with
 * invalid_request_uri, so one request_uri cannot lead several people to the consent screen.
 * (The one approval a request_uri allows is held by the consent step: interactions/consent-page.ts.)
 */

/** RFC 9126's request_uri prefix. */
const PUSHED_REQUEST_URN = 'urn:ietf:params:oauth:request_uri:';
const PLAUSIBLE_ID = /^[\w-]{1,128}$/;
const MARK = /^[\w-]{22}$/;
/** Longer than a request_uri lives (60 s), so a reload finds the mark. */
const MARK_SECONDS = 600;

export const browserMarkCookie = (environment: Environment) => `alm_${environment}_browser`;

export function requestUriBrowser(db: Db, environment: Environment, authorizationPath: string, secure: boolean): Middleware {
  const cookie = browserMarkCookie(environment);
  const refuse = errorPageLayout(environment);
  return async (ctx, next) => {
    const requestUri = ctx.method === 'GET' && ctx.path === authorizationPath ? ctx.query.request_uri : undefined;
    if (typeof requestUri !== 'string' || !requestUri.startsWith(PUSHED_REQUEST_URN)) return next();
    const id = requestUri.slice(PUSHED_REQUEST_URN.length);
    if (!PLAUSIBLE_ID.test(id)) return next();
    let mark = ctx.cookies.get(cookie);
    if (!mark || !MARK.test(mark)) mark = crypto.randomBytes(16).toString('base64url');
    ctx.cookies.set(cookie, mark, { path: authorizationPath, httpOnly: true, sameSite: 'lax', secure, maxAge: MARK_SECONDS * 1000 });
    const browser = crypto.createHash('sha256').update(mark).digest('hex');
    const holder = await claimPushedRequest(db, environment, hashId(id), browser);
    // No such unused request: the provider refuses it as it refuses any unknown request_uri.
    if (holder === undefined || holder === browser) return next();
    const description = 'this request_uri was opened in another browser first; the application must push a new request';
    sendErrorPage(ctx, oauthErrorPage(400, 'invalid_request_uri', description, 'authorization'), refuse);
  };
}
