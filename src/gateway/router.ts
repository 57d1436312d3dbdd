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
import { Existing, type GatewayServices, type RouteSpec } from './routing/route-spec.js';
import { DEFAULT_CALLERS, requireCallerKind } from './auth/require-caller-kind.js';
import { readJson } from '../http/json-body.js';
import type { ApiVersion } from './routing/versions.js';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf } from '../idempotency/key.js';
import { answerIdempotently } from './routing/idempotent.js';

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
 * validation → handler (under its idempotency key, when the operation takes one and the request
 * sent one: routing/idempotent.ts).
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
    if (spec.idempotent && client) throw new Error(`${spec.operationId}: an idempotent operation needs an organization's credential`);
    stack.push(async (ctx) => {
      // A bad key is refused before anything else of the request is read (docs/api.md, "Idempotency").
      const key = spec.idempotent ? idempotencyKeyOf(ctx.headers[IDEMPOTENCY_HEADER.toLowerCase()]) : undefined;
      if (key !== undefined) ctx.set(IDEMPOTENCY_HEADER, key);
      const params = parse(spec.params, ctx.params, 'path');
      const version = ctx.state.apiVersion as ApiVersion;
      const query = parse(spec.queryByVersion?.[version] ?? spec.query, ctx.query, 'query');
      const raw = spec.body ? await readJson(ctx) : undefined;
      // A request that fails validation never reaches the key: nothing is stored, the key stays free.
      const body = spec.body ? parse(spec.bodyByVersion?.[version] ?? spec.body, raw, 'body') : undefined;
      const run = async (db: Db) => {
        const result = await spec.handler({
          ctx,
          db,
          caller: ctx.state.caller!,
          recipient: ctx.state.recipient,
          version,
          params,
          query,
          body,
          services: options.services,
        });
        // A resource that already existed (answersExisting): 200, with the same Location.
        const [status, answerBody] = result instanceof Existing ? [200, result.body] : [spec.status ?? 200, result];
        return { status, body: answerBody, location: spec.location ? spec.location(answerBody) : null };
      };
      if (key !== undefined) {
        return answerIdempotently({
          ctx,
          db: options.db,
          box: options.services.box,
          caller: ctx.state.caller!,
          key,
          operation: `${spec.method.toUpperCase()} ${spec.path}`,
          request: { version, params: ctx.params, query: ctx.query, body: raw },
          run,
        });
      }
      const answer = await run(options.db);
      if (answer.location) ctx.set('Location', answer.location);
      if (answer.body === undefined) {
        // No content (a 204, a 202 that only accepts, a 200 of the suggestion uploads): an explicit
        // null body first, since Koa turns a missing body into 204 or, under any other status, a
        // text of the status's name.
        ctx.body = null;
        ctx.status = spec.status ?? 200;
        return;
      }
      if (spec.status) ctx.status = answer.status;
      ctx.body = answer.body;
    });
    router.register(spec.path, [spec.method], compose(stack) as never);
  }
  const routes = router.routes() as unknown as Middleware;
  const allowed = router.allowedMethods() as unknown as Middleware;
  return async (ctx, next) => routes(ctx, () => allowed(ctx, next));
}
