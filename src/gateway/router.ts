import Router from '@koa/router';
import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import type { Db } from '../db/database.js';
import { acceptAccessTokensOnly } from './auth/accept-credentials.js';
import { bearerToken } from './auth/bearer.js';
import { dpopProof } from './auth/dpop-proof.js';
import { ipAllowList } from './auth/ip-allow-list.js';
import { loadClientToken, loadCredential } from './auth/load-credential.js';
import { validateClientToken } from './auth/validate-client-token.js';
import { requireScope } from './auth/require-scope.js';
import { validateCredential } from './auth/validate-credential.js';
import { invalid, notFound } from '../errors/domain-error.js';
import type { GatewayServices, RouteSpec } from './routing/route-spec.js';
import { DEFAULT_CALLERS, requireCallerKind } from './auth/require-caller-kind.js';
import { readJson } from '../http/json-body.js';
import type { ApiVersion } from './routing/versions.js';

export interface GatewayOptions {
  db: Db;
  services: GatewayServices;
  /** API areas whose callers must be inside their client's CIDR ranges. */
  ipRestrictedAreas: readonly string[];
}

function availableIn(versions: readonly ApiVersion[]): Middleware {
  return async (ctx, next) => {
    if (!versions.includes(ctx.state.apiVersion as ApiVersion)) {
      throw notFound(`${ctx.method} ${ctx.path} does not exist in API version ${ctx.state.apiVersion}.`);
    }
    await next();
  };
}

function describeIssues(error: z.ZodError, where: string): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return `unknown ${where} parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
      const name = issue.path.map(String).join('.') || where;
      return `${name}: ${issue.message}`;
    })
    .join('; ');
}

function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: string): z.output<T> {
  if (!schema) return {} as z.output<T>;
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(`Invalid ${where}: ${describeIssues(result.error, where)}.`);
  return result.data;
}

/**
 * The gateway's router, generated from the route specs: per operation, version gate →
 * bearer → credential lookup (one query) → access-token-only → IP allow-list (before the
 * token is judged) → DPoP proof of a bound token → credential validity → scope → input
 * validation → handler.
 */
export function buildGatewayRouter(specs: readonly RouteSpec[], options: GatewayOptions): Middleware {
  const router = new Router();
  for (const spec of specs) {
    const client = spec.credentials === 'client';
    const stack: Middleware[] = [
      availableIn(spec.versions),
      bearerToken(),
      client ? loadClientToken(options.db) : loadCredential(options.db),
    ];
    if (spec.credentials === 'access_token') stack.push(acceptAccessTokensOnly());
    if (options.ipRestrictedAreas.includes(spec.area)) stack.push(ipAllowList(options.db, spec.area));
    stack.push(dpopProof(options.db), client ? validateClientToken() : validateCredential(options.db), requireScope(spec.access));
    // A route for its kinds; or, naming none, for the first kinds, never a later one (require-caller-kind.ts).
    if (spec.credentials !== 'client') stack.push(requireCallerKind(spec.callers ?? DEFAULT_CALLERS));
    stack.push(async (ctx) => {
      const params = parse(spec.params, ctx.params, 'path');
      const version = ctx.state.apiVersion as ApiVersion;
      const query = parse(spec.queryByVersion?.[version] ?? spec.query, ctx.query, 'query');
      const body = spec.body ? parse(spec.body, await readJson(ctx), 'body') : undefined;
      const result = await spec.handler({
        ctx,
        db: options.db,
        caller: ctx.state.caller!,
        recipient: ctx.state.recipient,
        version,
        params,
        query,
        body,
        services: options.services,
      });
      if (spec.status) ctx.status = spec.status;
      if (spec.location) ctx.set('Location', spec.location(result));
      ctx.body = result;
      // A 200 without content (a z.undefined() response): Koa would make an empty body a 204.
      if (result === undefined && spec.status === 200) {
        ctx.body = null;
        ctx.status = 200;
      }
    });
    router.register(spec.path, [spec.method], compose(stack) as never);
  }
  const routes = router.routes() as unknown as Middleware;
  const allowed = router.allowedMethods() as unknown as Middleware;
  return async (ctx, next) => routes(ctx, () => allowed(ctx, next));
}
