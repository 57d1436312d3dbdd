import type { Middleware } from 'koa';

type StepContext = Parameters<Middleware>[0];

/** A check of the request before the provider: it throws the refusal, or returns and the chain goes on. */
export type RequestCheck = (ctx: StepContext) => void;

/** What a step does with the answer on its way out, once the steps inside it and the provider have answered. */
export type AnswerStep = (ctx: StepContext) => void | Promise<void>;

/**
 * Synchronous checks of the request, in order, as one step of a chain: each would otherwise be
 * an async middleware of its own, with its promise and closure per request. Not async itself: a
 * check's throw becomes this step's rejection in koa-compose's dispatch (and is caught by
 * catchOAuthErrors' try alike), as it would from an async step.
 */
export function checksStep(...checks: RequestCheck[]): Middleware {
  return (ctx, next) => {
    for (const check of checks) check(ctx);
    return next();
  };
}

/**
 * Adjacent steps that each await the rest of the chain and then act on the answer, as one step:
 * `steps` in the order they act (innermost first), each after the one before it has finished.
 * The same as a middleware each with no try/finally: a throw (from the chain inside or from a
 * step) skips the steps after it, as it skipped the outer middlewares' after-code.
 */
export function answerSteps(...steps: AnswerStep[]): Middleware {
  return async (ctx, next) => {
    await next();
    for (const step of steps) await step(ctx);
  };
}
