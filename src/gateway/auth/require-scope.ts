import type { Middleware } from 'koa';
import { insufficientScope } from '../routing/problems.js';
import { requireFdxScope } from './require-fdx-scope.js';
import type { Access } from '../routing/route-spec.js';

/**
 * Reads need read_only or read_write, writes need read_write (docs/api.md, "Credentials").
 * API keys carry broad privileges for their organization.
 */
export function requireScope(access: Access): Middleware {
  if (access === 'fdx') return requireFdxScope();
  // A client's own token carries no scope; its route holds it to the client's own consents.
  if (access === 'recipient') return async (_ctx, next) => next();
  return async (ctx, next) => {
    const caller = ctx.state.caller!;
    if (caller.kind === 'access_token') {
      const ok = access === 'read' ? caller.scopes.has('read_only') || caller.scopes.has('read_write') : caller.scopes.has('read_write');
      if (!ok) throw insufficientScope(access === 'read' ? 'read_only' : 'read_write');
    }
    await next();
  };
}
