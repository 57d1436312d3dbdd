import type { Context, Middleware } from 'koa';

/**
 * Conservative defaults for an identity service: nothing is framed, sniffed, cached or sent
 * as a referrer. The hosted pages replace the CSP with their own page policy.
 */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    setSecurityHeaders(ctx);
    await next();
  };
}

/** What securityHeaders does before the rest of the request (the main app's requestFrame calls it directly). */
export function setSecurityHeaders(ctx: Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
  if (ctx.state.protocol === 'https') ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
}

/**
 * The API reference page (/docs/api) only: Redoc, served from our own origin, injects its
 * styles at run time (styled-components), shows data: images, fetches the document from the
 * same origin and runs its search index in a blob: worker. Nothing else is loaded.
 */
export const API_REFERENCE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
