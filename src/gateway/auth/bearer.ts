import type { Middleware } from 'koa';
import { unauthorized } from '../problems.js';

const TOKEN = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/**
 * Takes the bearer credential from `Authorization: Bearer …`. Anything else (no header,
 * Basic client credentials, a malformed value) is a 401 with WWW-Authenticate: client
 * credentials never work on API calls.
 */
export function bearerToken(): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) throw unauthorized('Authentication credentials were missing: send Authorization: Bearer <access token or API key>.', false);
    const match = /^Bearer[ ]+(\S+)$/i.exec(header.trim());
    if (!match || !TOKEN.test(match[1]!)) throw unauthorized('Authentication credentials were invalid: only Bearer access tokens and API keys are accepted.', true);
    ctx.state.bearer = match[1]!;
    await next();
  };
}
