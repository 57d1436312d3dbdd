import type { Middleware } from 'koa';

/**
 * Outermost provider middleware: waits for the work registered during the request
 * (finishBeforeResponse in request-scope.ts), so the answer never overtakes it.
 */
export function awaitResponseWork(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const pending = ctx.state.oidc?.pendingWork;
      if (pending) await Promise.all(pending);
    }
  };
}
