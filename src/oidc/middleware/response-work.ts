import type { Middleware } from 'koa';

const PENDING = Symbol('almoner.pendingWork');

type WithState = { state?: object } | undefined;

/**
 * Work started from a provider event (which the library does not await) that the answer
 * must not overtake: when a replayed refresh token gets its 401, the authorization it
 * belonged to is already marked revoked and gone from every session. The work must catch
 * its own errors; a failure is logged by its owner and never turns the answer into a 500.
 */
export function finishBeforeResponse(ctx: WithState, work: Promise<void>): void {
  if (!ctx?.state) return;
  const state = ctx.state as Record<symbol, unknown>;
  const pending = (state[PENDING] as Promise<void>[] | undefined) ?? [];
  pending.push(work);
  state[PENDING] = pending;
}

/** Outermost provider middleware: waits for the work registered during the request. */
export function awaitResponseWork(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const pending = (ctx.state as Record<symbol, unknown>)[PENDING] as Promise<void>[] | undefined;
      if (pending) await Promise.all(pending);
    }
  };
}
