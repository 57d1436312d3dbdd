import type { Middleware } from 'koa';
import { HttpProblem } from './problem.js';
import type { HostKey, HostTable } from './hosts.js';

/**
 * Picks the app for the request's Host. An authority we do not serve is 421 Misdirected
 * Request (RFC 9110 15.5.20): the connection reached us, but not for that name.
 */
export function hostDispatch(table: HostTable, apps: Readonly<Record<HostKey, Middleware>>): Middleware {
  return async (ctx, next) => {
    const target = table.lookup(ctx.get('host'));
    if (!target) {
      throw new HttpProblem(421, 'Misdirected Request', `This server does not serve the host "${ctx.get('host') || '(none)'}".`);
    }
    ctx.state.host = target.key;
    await apps[target.key](ctx, next);
  };
}
