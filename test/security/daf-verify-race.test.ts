/**
 * Attack: guess donor codes at POST /v1/authorization_tokens/verify faster than the limit allows
 * by sending the guesses concurrently, so that they all pass the "fewer than 10 failures?" check
 * before any of them is counted (and slip a correct code in among them).
 * Protection: each attempt is reserved with one conditional statement on the provider's counter
 * before the code is looked up; past the limit the answer is 429 with Retry-After whatever the
 * code, and a correct code gives its reservation back (only failures count).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { dafVerifyFailures } from '../../src/limits/rate-limits.js';

// The server gets a pool larger than the limit, so attempts held at the code check (below)
// cannot starve the ones that should be refused at once.
const { testDatabase: t, server } = useOAuthServer({ staff: 0, serverPoolMax: dafVerifyFailures.max + 10 });
// The test's own connections, outside the server's pool: one holds the lock, one watches.
let lockPool: pg.Pool;
let providers = 0;

type Answer = ApiResponse;
const call = (key: string, method: string, path: string, body?: unknown): Promise<Answer> =>
  apiRequest(server, 'sandbox', method, path, { bearer: key, json: body });

/** A fund provider of its own (the limit is per provider), its API key, and a pending account with a live code. */
async function provider() {
  providers += 1;
  const ein = `98-55500${String(providers).padStart(2, '0')}`;
  await addOrganization(t.db, { ein, name: `Race Fund ${providers}`, kind: 'fund_provider' });
  const key = (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key;
  const account = await call(key, 'POST', '/v1/donor_accounts', { donor: { email: `donor${providers}@example.org` } });
  const token = await call(key, 'POST', `/v1/donor_accounts/${account.body.id as string}/authorization_tokens`, {});
  return { key, accountId: account.body.id as string, code: token.body.code as string };
}

const verify = (key: string, code: string) => call(key, 'POST', '/v1/authorization_tokens/verify', { code });
const wrongCode = (i: number) => `WRONGCODE${String(i).padStart(3, '0')}`;

function expectLimited(answer: Answer) {
  expect(answer.status).toBe(429);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({
    title: 'Too Many Requests',
    status: 429,
    detail: expect.stringMatching(/failed verification attempts/),
  });
}

/** Sessions waiting for the lock the test holds on the tokens table: attempts held at the code check. */
async function heldAtCodeCheck(): Promise<number> {
  // pg_locks spans every database of the server, and databases cloned from one template share table oids.
  const { rows } = await lockPool.query<{ n: number }>(
    `select count(*)::int as n from pg_locks
     where database = (select oid from pg_database where datname = current_database())
       and relation = 'donor_authorization_tokens'::regclass and not granted`,
  );
  return rows[0]!.n;
}

describe('DAF verify under a concurrent burst', () => {
  it('checks at most the limit of 40 concurrent wrong codes, refuses the rest with 429, and refuses a correct code inside and after the burst', async () => {
    const { key, accountId, code } = await provider();
    lockPool = new pg.Pool({ connectionString: t.url, max: 2 });
    const holder = await lockPool.connect();
    let answers: Answer[] = [];
    try {
      // Every code lookup waits behind this lock, as slow checks would under load: the attempts
      // that got through the limit are all in flight at once when the next ones arrive.
      await holder.query('begin');
      await holder.query('lock table donor_authorization_tokens in access exclusive mode');
      let answered = 0;
      const burst = Array.from({ length: 40 }, (_, i) => verify(key, wrongCode(i)).then((a) => ((answered += 1), a)));
      // Settled: every attempt is either answered or held at the code check.
      await expect.poll(async () => answered + (await heldAtCodeCheck()), { timeout: 60_000, interval: 50 }).toBe(40);
      expect(answered).toBe(40 - dafVerifyFailures.max);
      // The donor's real code, arriving while the limit's worth of guesses is still being checked.
      expectLimited(await verify(key, code));
      await holder.query('commit');
      answers = await Promise.all(burst);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      holder.release();
      await lockPool.end();
    }
    const wrong = answers.filter((a) => a.status === 404);
    expect(wrong).toHaveLength(dafVerifyFailures.max);
    for (const a of wrong) expect(a.body).toMatchObject({ status: 404, detail: 'The code is invalid or has expired.' });
    const limited = answers.filter((a) => a.status !== 404);
    expect(limited).toHaveLength(40 - dafVerifyFailures.max);
    for (const a of limited) expectLimited(a);
    // After the burst, still refused; the account was never approved.
    expectLimited(await verify(key, code));
    expect((await call(key, 'GET', `/v1/donor_accounts/${accountId}`)).body.status).toBe('pending');
  }, 120_000);

  it('counts failures only: a correct code below the limit succeeds and gives its attempt back', async () => {
    const { key, code } = await provider();
    const other = await provider();
    for (let i = 0; i < dafVerifyFailures.max - 1; i += 1) expect((await verify(key, wrongCode(i))).status).toBe(404);
    const ok = await verify(key, code);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('approved');
    // The success did not use up the last failure the window allows; the next one is refused.
    expect((await verify(key, wrongCode(98))).status).toBe(404);
    expectLimited(await verify(key, wrongCode(99)));
    // The limit is per provider: another provider is unaffected.
    expect((await verify(other.key, other.code)).status).toBe(200);
  });
});
