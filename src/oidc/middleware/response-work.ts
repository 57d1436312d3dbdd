import type { Middleware } from 'koa';
import { oidcState } from '../request-scope.js';

/**
 * Work started from a provider event (which the library does not await) that the answer
 * must not overtake: when a replayed refresh token gets its 401, the authorization it
 * belonged to is already marked revoked and gone from every session. The work must catch
 * its own errors; a failure is logged by its owner and never turns the answer into a 500.
 */
export function finishBeforeResponse(ctx: { state?: unknown } | undefined, work: Promise<void>): void {
  if (!ctx?.state) return;
  (oidcState(ctx).pendingWork ??= []).push(work);
}

/** Outermost provider middleware: waits for the work registered during the request. */
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
