import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, targetProblem, type Profile } from './targets.js';

export interface SendResult {
  ok: boolean;
  status?: number;
  error?: string;
  /** The attempt was cut short by `signal` (shutdown), not by the receiver. */
  interrupted?: boolean;
  /** How a failed attempt failed, when not by its HTTP status (the metrics' outcome). */
  failure?: 'timeout' | 'refused' | 'connection_error';
}

/** Resolves a host name to every address it has (injectable so tests need no DNS). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** How long one DNS query of a webhook target may take, per try; two tries. */
const DNS_QUERY_TIMEOUT_MS = 2_000;

/**
 * Name resolution for webhook targets over c-ares (`dns.Resolver`: A and AAAA queries on the
 * event loop), never getaddrinfo: `dns.lookup` runs on the libuv thread pool, whose few threads
 * (UV_THREADPOOL_SIZE, 2 in `npm start`) also hash passwords with argon2, so a target whose DNS
 * never answers would hold them and stall every sign-in (docs/security.md, "One tenant's
 * webhooks starving the others"). Each query has a
 * deadline of its own. `servers` (host or host:port) replaces the system's name servers.
 */
export function dnsResolver(options: { servers?: string[]; timeoutMs?: number } = {}): Resolver {
  const resolver = new dns.promises.Resolver({ timeout: options.timeoutMs ?? DNS_QUERY_TIMEOUT_MS, tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    // Neither family answered: the IPv4 query's error says why (ENOTFOUND, ETIMEOUT…).
    throw v4.status === 'rejected' ? (v4.reason as Error) : Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
  };
}

export const systemResolver: Resolver = dnsResolver();

/**
 * How much of a response body is read. Only the status decides the outcome; the body is read
 * (and discarded, never logged) so the exchange ends cleanly, but a receiver streaming an
 * endless body must not keep the attempt open.
 */
export const MAX_RESPONSE_BYTES = 16 * 1024;

/**
 * A `lookup` for the request that resolves the name and refuses it unless every address is
 * public. It runs on the connection that is made, so DNS rebinding (public at a first lookup,
 * private at the next) cannot slip a private address in after a check; refusing the name when
 * any address is private also covers happy-eyeballs picking another address of the set.
 */
export function guardedLookup(resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find((entry) => !isPublicAddress(entry.address));
        if (refused || addresses.length === 0) {
          const error = Object.assign(new Error(`refusing to deliver to non-public address ${refused?.address ?? '(none)'}`), {
            code: 'EADDRNOTPUBLIC',
          });
          return callback(error, '', 0);
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const wanted = family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
        if (options.all) return callback(null, wanted);
        const first = wanted[0];
        if (!first)
          return callback(Object.assign(new Error(`${hostname} has no IPv${family as number} address`), { code: 'ENOTFOUND' }), '', 0);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

export interface PostOptions {
  /** The whole attempt (connect, TLS, headers, body) must finish within this, or it is aborted. */
  timeoutMs: number;
  profile: Profile;
  /** Aborts the attempt at once (shutdown); the result is then `interrupted`. */
  signal?: AbortSignal;
  resolve?: Resolver;
}

/**
 * One delivery attempt. Always settles, whatever the receiver does: an overall deadline
 * destroys the socket (a socket idle timeout would be reset by a receiver trickling a byte at
 * a time), the body read is capped, and every way a response can end (end, error, aborted,
 * close) settles the promise. A redirect is an answer like any other non-2xx: never followed.
 */
export function postJson(url: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<SendResult> {
  const problem = targetProblem(url, options.profile);
  if (problem) return Promise.resolve({ ok: false, error: problem, failure: 'refused' });
  if (options.signal?.aborted)
    return Promise.resolve({ ok: false, error: 'not attempted: the server is shutting down', interrupted: true });
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    let status: number | undefined;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      resolve(result);
    };
    const outcome = (): SendResult =>
      status !== undefined && status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` };
    const onAbort = () => finish({ ok: false, status, error: 'interrupted: the server shut down during the attempt', interrupted: true });

    const request = client.request(target, {
      method: 'POST',
      // No pooled keep-alive socket: each attempt owns its connection and closes it.
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Almoner-Webhooks/1.0',
        connection: 'close',
        ...headers,
      },
      lookup: options.profile === 'production' ? guardedLookup(options.resolve ?? systemResolver) : undefined,
    });
    const deadline = setTimeout(
      () => finish({ ok: false, status, error: `timed out after ${options.timeoutMs} ms`, failure: 'timeout' }),
      options.timeoutMs,
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });

    let response: http.IncomingMessage | undefined;
    request.on('response', (answer) => {
      response = answer;
      status = answer.statusCode ?? 0;
      let read = 0;
      answer.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) finish(outcome());
      });
      answer.on('end', () => finish(outcome()));
      answer.on('aborted', cutShort);
      answer.on('error', cutShort);
      answer.on('close', ended);
    });
    // A body cut short (a Content-Length never fulfilled, a reset) is a failed attempt.
    const cutShort = () => finish({ ok: false, status, error: `HTTP ${status}: the response ended before its body was complete` });
    const ended = () => {
      if (!response) finish({ ok: false, error: 'the connection closed without a response' });
      else if (response.complete) finish(outcome());
      else cutShort();
    };
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ ok: false, status, error: error.message, failure: error.code === 'EADDRNOTPUBLIC' ? 'refused' : 'connection_error' }),
    );
    request.on('close', ended);
    request.end(body);
  });
}
