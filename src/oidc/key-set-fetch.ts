import http from 'node:http';
import https from 'node:https';
import { guardedLookup, systemResolver, type Resolver } from '../webhooks/send.js';
import { outboundUrlProblem, type Profile } from '../webhooks/targets.js';

/**
 * How the providers fetch a bank-data client's JWK Set from its jwks_uri (oidc-provider's
 * `fetch` option): the only address the server connects to because a client names it, and any
 * request naming the client makes the provider fetch it while its keys are not cached. So it
 * is held to the webhook address rules (webhooks/targets.ts: https to public addresses in
 * production; the dev profile also allows http on loopback), checked again here before any
 * connection and, in production, on every address the name resolves to, on the connection
 * itself (webhooks/send.ts, guardedLookup: no DNS rebinding). One fetch has an overall deadline
 * and reads at most MAX_BYTES. A failed fetch (refused, unreachable, timed out, not 200) is
 * remembered for BACKOFF_MS per address: meanwhile no request, however many, connects there
 * (docs/security.md, "Server-side request forgery through a client's jwks_uri").
 */

/** The whole fetch: DNS, connect, TLS, headers and body. */
export const FETCH_DEADLINE_MS = 2_500;
/** How long a failed address is left alone. */
export const BACKOFF_MS = 60_000;
/** More than any JWK Set of ten keys needs. */
const MAX_BYTES = 64 * 1024;
/** Addresses remembered at most (a registry has far fewer key-set URLs). */
const MAX_REMEMBERED = 10_000;

export interface KeySetFetchOptions {
  profile: Profile;
  resolve?: Resolver;
  deadlineMs?: number;
  backoffMs?: number;
  /** The clock the back-off is measured on (tests hold it). */
  now?: () => number;
  /** Told of each failed fetch (the log), with the address and why. */
  onFailure?: (url: string, reason: string) => void;
}

/** What the provider hands the fetch: the URL, and RequestInit with its own timeout signal. */
export type KeySetFetch = (url: string | URL, init?: { signal?: AbortSignal | null }) => Promise<Response>;

class KeySetFetchError extends Error {}

export function keySetFetch(options: KeySetFetchOptions): KeySetFetch {
  const now = options.now ?? Date.now;
  const backoffMs = options.backoffMs ?? BACKOFF_MS;
  const failedUntil = new Map<string, number>();
  const fail = (url: string, reason: string): never => {
    if (failedUntil.size >= MAX_REMEMBERED) failedUntil.clear();
    failedUntil.set(url, now() + backoffMs);
    options.onFailure?.(url, reason);
    throw new KeySetFetchError(`jwks_uri ${reason}`);
  };
  return async (input, init = {}) => {
    const url = String(input);
    const until = failedUntil.get(url);
    if (until !== undefined && now() < until)
      throw new KeySetFetchError(`jwks_uri failed recently; not fetched again for ${Math.ceil((until - now()) / 1000)} s`);
    failedUntil.delete(url);
    const problem = outboundUrlProblem(url, options.profile);
    if (problem) return fail(url, problem);
    let answer: { status: number; headers: Headers; body: Buffer };
    try {
      answer = await get(url, { ...options, deadlineMs: options.deadlineMs ?? FETCH_DEADLINE_MS }, init);
    } catch (error) {
      return fail(url, (error as Error).message);
    }
    if (answer.status !== 200) fail(url, `answered HTTP ${answer.status}`);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}

/** One GET with its deadline, the caller's signal and the body cap; redirects are not followed. */
function get(
  url: string,
  options: KeySetFetchOptions & { deadlineMs: number },
  init: { signal?: AbortSignal | null },
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, result?: { status: number; headers: Headers; body: Buffer }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      init.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      if (error) reject(error);
      else resolve(result!);
    };
    const onAbort = () => finish(new Error('fetch aborted'));
    const request = client.request(target, {
      method: 'GET',
      // No pooled socket: each fetch owns its connection and closes it.
      agent: false,
      headers: { accept: 'application/json', 'user-agent': 'Almoner', connection: 'close' },
      lookup: options.profile === 'production' ? guardedLookup(options.resolve ?? systemResolver) : undefined,
    });
    const deadline = setTimeout(() => finish(new Error(`timed out after ${options.deadlineMs} ms`)), options.deadlineMs);
    if (init.signal?.aborted) return onAbort();
    init.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) return finish(new Error(`answered more than ${MAX_BYTES} bytes`));
        chunks.push(chunk);
      });
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        finish(undefined, { status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      });
      response.on('error', (error) => finish(error));
      response.on('aborted', () => finish(new Error('the response ended before its body was complete')));
    });
    request.on('error', (error) => finish(error));
    request.end();
  });
}
