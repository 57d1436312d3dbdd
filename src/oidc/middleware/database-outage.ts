import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { isDatabaseUnavailable, isUnrepresentableInput } from '../../db/database.js';
import { isClientAbort } from '../../http/client-abort.js';
import { storageFailureProblem } from '../../http/oauth-problem.js';
import { sendOAuthProblem } from '../../http/problem.js';
import { onProviderEvent, SERVER_ERROR_EVENT } from '../provider-internals.js';
import { oidcState } from '../request-scope.js';

/**
 * The provider turns any storage failure into a 500 server_error; the failure it announces
 * (server_error) is kept in the request's state, and the answer is the one
 * http/oauth-problem.ts gives that failure (storageFailureProblem: 503 with Retry-After while
 * the database is down, 400 for input Postgres cannot represent).
 */
export function databaseOutage(provider: Provider): Middleware {
  onProviderEvent(provider, SERVER_ERROR_EVENT, (ctx: { state?: unknown; req?: IncomingMessage } | undefined, error: unknown) => {
    // A caller that hung up while its body was read is no outage (docs/operations.md, "HTTP conventions").
    if (!ctx?.state || isClientAbort(error, ctx.req)) return;
    if (isDatabaseUnavailable(error)) oidcState(ctx).storageFailure = 'unavailable';
    else if (isUnrepresentableInput(error)) oidcState(ctx).storageFailure = 'bad_input';
  });
  return async (ctx, next) => {
    await next();
    const problem = storageFailureProblem(ctx.state.oidc?.storageFailure);
    if (!problem) return;
    // An OAuth error answer (the token endpoint and the like) is replaced; a page (the
    // authorization endpoint's error page) keeps its body and takes the status and headers.
    if (!ctx.response.is('html')) return sendOAuthProblem(ctx, problem);
    ctx.status = problem.status;
    for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  };
}
