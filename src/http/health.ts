import net from 'node:net';
import type { Middleware } from 'koa';
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

/** Liveness (the process answers) and readiness (the database answers within 2 s). */
export function healthEndpoints(db: Db): Middleware {
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
    ctx.body = { status: 'ready' };
  };
}
