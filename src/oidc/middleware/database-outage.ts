import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { isDatabaseUnavailable, isUnrepresentableInput } from '../../db/database.js';
import { isClientAbort } from '../../http/client-abort.js';
import { oauthProblem, sendOAuthProblem, unavailable } from '../../http/problem.js';
import { oidcState } from '../request-scope.js';


/**
 * The provider turns any storage failure into a 500 server_error. When the cause is an
 * unreachable database, the client should hear "try again shortly": 503 with Retry-After
 * (as every other endpoint answers during an outage), never a 500. Input Postgres cannot
 * represent (a NUL byte) is the client's error: 400.
 */
export function databaseOutage(provider: Provider): Middleware {
  (provider as unknown as NodeJS.EventEmitter).on('server_error', (ctx: { state?: unknown; req?: IncomingMessage } | undefined, error: unknown) => {
    // A caller that hung up while its body was read is no outage (docs/operations.md, "HTTP conventions").
    if (!ctx?.state || isClientAbort(error, ctx.req)) return;
    if (isDatabaseUnavailable(error)) oidcState(ctx).storageFailure = 'unavailable';
    else if (isUnrepresentableInput(error)) oidcState(ctx).storageFailure = 'bad_input';
  });
  return async (ctx, next) => {
    await next();
    const failure = ctx.state.oidc?.storageFailure;
    const problem = failure === 'unavailable' ? unavailable() : failure === 'bad_input' ? oauthProblem(400, 'the request contains a value that cannot be accepted') : undefined;
    if (!problem) return;
    // A JSON answer (the token endpoint and the like) is replaced; a page (the authorization
    // endpoint's error page) keeps its body and takes the status and headers.
    if (ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)) return sendOAuthProblem(ctx, problem);
    ctx.status = problem.status;
    for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  };
}
