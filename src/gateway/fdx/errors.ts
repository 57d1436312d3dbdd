import type { Middleware } from 'koa';
import { isClientAbort } from '../../http/client-abort.js';
import { toProblem } from '../../http/error-handler.js';
import { unansweredProblem } from '../../http/problem.js';
import { withFdxCode } from './problems.js';

/**
 * The FDX API's problems carry an FDX `code` and `message` (docs/api.md, "FDX bank-data API",
 * Errors), including those raised outside its routes: an unknown /fdx/v6 path, a method not
 * allowed, a malformed parameter, a 500 or 503. The app's error middleware still renders (and logs)
 * them.
 */
export function fdxProblems(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      const unanswered = unansweredProblem(ctx, 'FDX resource');
      if (unanswered) throw unanswered;
    } catch (error) {
      // A caller that hung up gets no problem: the app's error middleware records it as such.
      if (isClientAbort(error, ctx.req)) throw error;
      throw withFdxCode(toProblem(error, ctx.state.log));
    }
  };
}
