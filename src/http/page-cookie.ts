import type { Context } from 'koa';
import type { Environment } from '../db/schema.js';

/**
 * One of the hosted pages' own cookies (docs/oauth.md, "Security of the pages"): named
 * `alm_<environment>_<purpose>`, HttpOnly, path `/`, Secure when the dashboard origin is
 * https (told to Koa, which cannot see TLS ended at a proxy), with the SameSite its use needs.
 */
export interface PageCookieDeps {
  environment: Environment;
  origin: string;
}

export function pageCookie(deps: PageCookieDeps, ctx: Context, purpose: string, sameSite: 'strict' | 'lax') {
  const secure = deps.origin.startsWith('https:');
  ctx.cookies.secure = secure;
  const name = `alm_${deps.environment}_${purpose}`;
  const options = { httpOnly: true, sameSite, secure, path: '/', overwrite: true };
  return {
    get: (): string | undefined => ctx.cookies.get(name),
    set: (value: string, maxAgeMs: number): void => void ctx.cookies.set(name, value, { ...options, maxAge: maxAgeMs }),
    clear: (): void => void ctx.cookies.set(name, null, options),
  };
}
