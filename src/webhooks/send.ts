import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, targetProblem, type Profile } from './targets.js';

export interface SendResult {
  ok: boolean;
  status?: number;
  error?: string;
}

/**
 * In production the address a name resolves to must be public, checked on the very
 * connection that is made (so DNS rebinding cannot slip a private address in after a check).
 */
function guardedLookup(profile: Profile): LookupFunction | undefined {
  if (profile !== 'production') return undefined;
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: false }, (error, address, family) => {
      if (error) return callback(error, '', 0);
      if (!isPublicAddress(address as string)) return callback(Object.assign(new Error(`refusing to deliver to non-public address ${address as string}`), { code: 'EADDRNOTPUBLIC' }), '', 0);
      callback(null, address as string, family as number);
    });
  };
}

export function postJson(url: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; profile: Profile }): Promise<SendResult> {
  const problem = targetProblem(url, options.profile);
  if (problem) return Promise.resolve({ ok: false, error: problem });
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Almoner-Webhooks/1.0', ...headers },
        timeout: options.timeoutMs,
        lookup: guardedLookup(options.profile),
      },
      (response) => {
        // Only the status matters; the body is drained and discarded (never logged).
        response.resume();
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
    request.on('error', (error) => resolve({ ok: false, error: error.message }));
    request.end(body);
  });
}
