/**
 * Attack: a fund provider subscribes a webhook URL whose host name's DNS never answers (its own
 * name server, silent). Resolved with getaddrinfo (`dns.lookup`), every delivery attempt holds a
 * thread of libuv's small pool (UV_THREADPOOL_SIZE, 2 in `npm start`) until the system resolver
 * gives up, and argon2, which hashes and checks passwords on the same pool, waits behind them:
 * sign-ins stall.
 * Protection: webhook targets are resolved with c-ares (`dns.Resolver`, src/webhooks/send.ts),
 * which queries from the event loop and holds no pool thread, each query with its own deadline.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { dnsResolver } from '../../src/webhooks/send.js';

let silent: dgram.Socket;
let queries = 0;

beforeAll(async () => {
  // A name server that reads every query and never answers.
  silent = dgram.createSocket('udp4');
  silent.on('message', () => void (queries += 1));
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
});
afterAll(() => silent?.close());

describe('a webhook target whose DNS never answers', () => {
  it('holds no thread of the pool argon2 uses: passwords hash while a burst of lookups hangs, and each lookup ends at its deadline', async () => {
    const resolve = dnsResolver({ servers: [`127.0.0.1:${silent.address().port}`], timeoutMs: 1_500 });
    let settled = 0;
    const lookups = Array.from({ length: 16 }, (_, i) =>
      resolve(`hook-${i}.example.org`)
        .then(
          () => 'resolved',
          (error: NodeJS.ErrnoException) => error.code,
        )
        .finally(() => void (settled += 1)),
    );
    await expect.poll(() => queries).toBeGreaterThanOrEqual(16);

    // More hashes than the pool has threads, all finished while every lookup still hangs.
    const hashes = await Promise.all(Array.from({ length: 4 }, () => hashPassword('correct horse battery staple', MIN_PASSWORD_PARAMS)));
    expect(hashes.every((hash) => hash.startsWith('$argon2id$'))).toBe(true);
    expect(settled).toBe(0);

    // Every lookup has a deadline: two tries of 1.5 s each, then a clear error.
    const outcomes = await Promise.all(lookups);
    expect(new Set(outcomes)).toEqual(new Set(['ETIMEOUT']));
  }, 30_000);
});
