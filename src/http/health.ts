import net from 'node:net';
import type { Context, Middleware } from 'koa';
import { pingDatabase, type Db } from '../db/database.js';
import { HttpProblem } from './problem.js';
import { normaliseIp } from './client-address.js';

export function isHealthPath(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && (path === '/healthz' || path === '/readyz');
}

export function isLoopback(address: string): boolean {
  const ip = normaliseIp(address);
  if (net.isIPv4(ip)) return ip.startsWith('127.');
  return ip === '::1';
}

const READY_TIMEOUT_MS = 2_000;

/** Something an operator should see that leaves the process able to serve: a stable code and the details. */
export interface ReadinessWarning {
  code: string;
  detail: string;
}

export interface ReadinessOptions {
  warnings?: () => readonly ReadinessWarning[];
  /** Whether the caller sees each warning's detail (paths, host names), not only its code. */
  showDetail?: (ctx: Context) => boolean;
}

/**
 * Liveness (the process answers) and readiness (the database answers within 2 s). Warnings
 * (a clients file that is not the registry, docs/operations.md "The clients file across
 * machines") leave /readyz at 200 and are listed in its body: their codes for anyone, their
 * details for the callers `showDetail` admits.
 */
export function healthEndpoints(db: Db, { warnings = () => [], showDetail = () => false }: ReadinessOptions = {}): Middleware {
  return async (ctx, next) => {
    if (!isHealthPath(ctx.method, ctx.path)) return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        pingDatabase(db),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
    } catch {
      throw new HttpProblem(503, 'Service Unavailable', 'The database is not reachable.', { headers: { 'Retry-After': '5' } });
    } finally {
      clearTimeout(timer);
    }
    const current = warnings();
    const detail = current.length > 0 && showDetail(ctx);
    ctx.body =
      current.length > 0
        ? { status: 'ready', warnings: current.map((w) => (detail ? { code: w.code, detail: w.detail } : { code: w.code })) }
        : { status: 'ready' };
  };
}
