import type { Middleware } from 'koa';
import { DomainError } from '../../errors/domain-error.js';
import { headerCount } from '../../http/repeated-header.js';
import { unauthorized } from '../routing/problems.js';

const TOKEN = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/**
 * Takes the credential from `Authorization: Bearer …` (or `DPoP …` for a DPoP-bound token). Anything else (no header,
 * Basic client credentials, a malformed value) is a 401 with WWW-Authenticate: client
 * credentials never work on API calls. Two or more Authorization headers are a 400: which one
 * counts is not ours to guess (docs/security.md, "Two credentials in one request").
 */
export function bearerToken(): Middleware {
  return async (ctx, next) => {
    const sent = headerCount(ctx.req, 'authorization');
    if (sent > 1) throw new DomainError('invalid', `The request carries ${sent} Authorization headers: send exactly one.`);
    const header = ctx.get('authorization');
    if (!header)
      throw unauthorized('Authentication credentials were missing: send Authorization: Bearer <access token or API key>.', false);
    const match = /^(Bearer|DPoP)[ ]+(\S+)$/i.exec(header.trim());
    if (!match || !TOKEN.test(match[2]!))
      throw unauthorized('Authentication credentials were invalid: only Bearer access tokens and API keys are accepted.', true);
    ctx.state.bearer = match[2]!;
    // DPoP-bound tokens of bank-data clients (docs/bank-data.md, "Calling the API"): dpop-proof.ts judges the scheme.
    ctx.state.scheme = match[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
    await next();
  };
}
