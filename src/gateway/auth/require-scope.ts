import type { Middleware } from 'koa';
import { insufficientScope } from '../problems.js';

export type Access = 'read' | 'write';

/**
 * Reads need read_only or read_write, writes need read_write (PRODUCT.md section 10).
 * API keys carry broad privileges for their organization.
 */
export function requireScope(access: Access): Middleware {
  return async (ctx, next) => {
    const caller = ctx.state.caller!;
    if (caller.kind === 'access_token') {
      const ok = access === 'read' ? caller.scopes.has('read_only') || caller.scopes.has('read_write') : caller.scopes.has('read_write');
      if (!ok) throw insufficientScope(access === 'read' ? 'read_only' : 'read_write');
    }
    await next();
  };
}
