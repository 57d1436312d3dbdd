import type { Context } from 'koa';

/** The route label of a request no route claimed: raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Names a request by its route template (/v1/donations/:id), never by its raw path, so the
 * label set stays bounded and holds no ids or tokens. @koa/router records the template it
 * matched (path and method) on the context; what is served outside a router (health, the
 * metrics endpoint, the provider's fixed endpoints) is named from a fixed list.
 */
export class RouteLabels {
  private readonly fixed: ReadonlySet<string>;
  /** [prefix ending in '/', template] for paths with a trailing id served outside a router. */
  private readonly prefixed: readonly (readonly [string, string])[];

  constructor(fixedPaths: Iterable<string>, prefixed: Readonly<Record<string, string>> = {}) {
    this.fixed = new Set(fixedPaths);
    this.prefixed = Object.entries(prefixed).map(([prefix, template]) => [prefix.endsWith('/') ? prefix : `${prefix}/`, template] as const);
  }

  of(ctx: Context): string {
    const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    if (typeof matched === 'string') return matched;
    const path = ctx.path;
    if (this.fixed.has(path)) return path;
    for (const [prefix, template] of this.prefixed) if (path.startsWith(prefix)) return template;
    return UNMATCHED_ROUTE;
  }
}

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The request method, or "other" for the rarer ones, so a client cannot mint label values. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'other';
}
