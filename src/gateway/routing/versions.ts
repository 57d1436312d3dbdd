import type { Middleware } from 'koa';
import { invalid } from '../../errors/domain-error.js';

/** Interface versions by date, selected per request by Api-Version (docs/api.md, "Versions"). */
export const API_VERSIONS = ['2026-04-01', '2026-01-15'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const DEFAULT_API_VERSION: ApiVersion = '2026-04-01';

/** Reads `Api-Version` (default 2026-04-01), refuses unknown values with 400, and echoes it on the response. */
export function apiVersion(): Middleware {
  return async (ctx, next) => {
    const requested = ctx.get('api-version').trim() || DEFAULT_API_VERSION;
    if (!(API_VERSIONS as readonly string[]).includes(requested)) {
      throw invalid(`Unknown Api-Version "${requested.slice(0, 40)}"; supported: ${API_VERSIONS.join(', ')}.`);
    }
    ctx.state.apiVersion = requested;
    ctx.set('Api-Version', requested);
    await next();
  };
}
