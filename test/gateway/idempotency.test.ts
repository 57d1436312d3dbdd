import fs from 'node:fs';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { GATEWAY_ROUTES } from '../../src/gateway/index.js';
import { buildOpenApiDocument } from '../../src/gateway/openapi.js';
import { sweepIdempotencyKeys } from '../../src/idempotency/idempotency-keys-repository.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Idempotency-Key on the gateway's creating POSTs (docs/api.md, "Idempotency"), over real HTTP
 * against a real database: one key, one creation, one answer replayed.
 */

const { testDatabase: t, server } = useOAuthServer();
let sandboxKey: string;
let productionKey: string;
let otherOrgKey: string;

beforeAll(async () => {
  await addOrganization(t.db, { ein: '98-3456781', name: 'Idempotent Giving Fund', kind: 'fund_provider' });
  await addOrganization(t.db, { ein: '98-3456782', name: 'Another Giving Fund', kind: 'fund_provider' });
  sandboxKey = (await createApiKey(t.db, { org: '98-3456781', environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: '98-3456781', environment: 'production' })).key;
  otherOrgKey = (await createApiKey(t.db, { org: '98-3456782', environment: 'sandbox' })).key;
});

function create(body: unknown, key: string | undefined, options: { bearer?: string; environment?: 'sandbox' | 'production' } = {}) {
  return apiRequest(server, options.environment ?? 'sandbox', 'POST', '/v1/donor_accounts', {
    bearer: options.bearer ?? sandboxKey,
    json: body,
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
  });
}

async function accountsWith(email: string): Promise<number> {
  const rows = await t.db.selectFrom('donor_accounts').select('id').where('email', '=', email).execute();
  return rows.length;
}

async function keyRows(key: string): Promise<number> {
  const rows = await t.db.selectFrom('idempotency_keys').select('key').where('key', '=', key).execute();
  return rows.length;
}

function expectSameAnswer(a: ApiResponse, b: ApiResponse) {
  expect(b.status).toBe(a.status);
  expect(b.body).toEqual(a.body);
  expect(b.headers.get('location')).toBe(a.headers.get('location'));
}

describe('Idempotency-Key on creating POSTs', () => {
  it('the same key and body replay the first answer (status, body, Location) and create one row', async () => {
    const body = { donor: { email: 'replay@example.org', first_name: 'Ada' }, external_id: 'ext-1' };
    const first = await create(body, 'replay-key-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-key')).toBe('replay-key-1');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same request with its members in another order is the same request.
    const again = await create({ external_id: 'ext-1', donor: { first_name: 'Ada', email: 'replay@example.org' } }, 'replay-key-1');
    expectSameAnswer(first, again);
    expect(again.headers.get('idempotency-key')).toBe('replay-key-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await accountsWith('replay@example.org')).toBe(1);
    // Without a key, the same request is a new creation (here, a conflict with the first).
    expect((await create(body, undefined)).status).toBe(409);
  });

  it('the same key with another body, or on another operation, is 409 and creates nothing', async () => {
    const first = await create({ donor: { email: 'first@example.org' } }, 'reused-key');
    expect(first.status).toBe(201);
    const other = await create({ donor: { email: 'second@example.org' } }, 'reused-key');
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'conflict' });
    expect(other.body.detail).toMatch(/Idempotency-Key was already used with another request/);
    expect(other.headers.get('idempotency-key')).toBe('reused-key');
    expect(await accountsWith('second@example.org')).toBe(0);
    const token = await apiRequest(server, 'sandbox', 'POST', `/v1/donor_accounts/${first.body.id as string}/authorization_tokens`, {
      bearer: sandboxKey,
      json: {},
      headers: { 'Idempotency-Key': 'reused-key' },
    });
    expect(token.status).toBe(409);
    expect(await t.db.selectFrom('donor_authorization_tokens').select('id').execute()).toHaveLength(0);
  });

  it('8 concurrent requests with one key create once, and all get the same answer', async () => {
    const body = { donor: { email: 'concurrent@example.org' } };
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(body, 'concurrent-key')));
    expect(answers[0]!.status).toBe(201);
    for (const answer of answers) expectSameAnswer(answers[0]!, answer);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
    expect(await accountsWith('concurrent@example.org')).toBe(1);
    expect(await keyRows('concurrent-key')).toBe(1);

    // The row exists already (its answer past 24 hours): no insert waits on another here, only
    // the row lock keeps the 8 from each running afresh.
    await sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = 'concurrent-key'`.execute(t.db);
    const next = { donor: { email: 'concurrent-again@example.org' } };
    const again = await Promise.all(Array.from({ length: 8 }, () => create(next, 'concurrent-key')));
    expect(again[0]!.status).toBe(201);
    for (const answer of again) expectSameAnswer(again[0]!, answer);
    expect(await accountsWith('concurrent-again@example.org')).toBe(1);
  });

  it('another organization and the other environment have key spaces of their own', async () => {
    const mine = await create({ donor: { email: 'scoped@example.org' } }, 'scoped-key');
    const theirs = await create({ donor: { email: 'scoped@example.org' } }, 'scoped-key', { bearer: otherOrgKey });
    const production = await create({ donor: { email: 'scoped@example.org' } }, 'scoped-key', {
      bearer: productionKey,
      environment: 'production',
    });
    for (const res of [mine, theirs, production]) expect(res.status).toBe(201);
    expect(new Set([mine.body.id, theirs.body.id, production.body.id]).size).toBe(3);
    expect(await accountsWith('scoped@example.org')).toBe(3);
    expect(await keyRows('scoped-key')).toBe(3);
  });

  it('a key that is empty, too long or not visible ASCII is 400 naming the header, and nothing is created', async () => {
    for (const bad of ['', 'with space', 'x'.repeat(256), 'tab\there']) {
      const res = await create({ donor: { email: 'badkey@example.org' } }, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.detail).toMatch(/Idempotency-Key header/);
    }
    expect(await accountsWith('badkey@example.org')).toBe(0);
    expect((await create({ donor: { email: 'longest@example.org' } }, '~'.repeat(255))).status).toBe(201);
  });

  it('a key older than 24 hours runs afresh and replaces the old answer; the sweep deletes such keys', async () => {
    const first = await create({ donor: { email: 'old@example.org' } }, 'expired-key');
    expect(first.status).toBe(201);
    await sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = 'expired-key'`.execute(t.db);
    const fresh = await create({ donor: { email: 'new@example.org' } }, 'expired-key');
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expectSameAnswer(fresh, await create({ donor: { email: 'new@example.org' } }, 'expired-key'));

    await sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = 'expired-key'`.execute(t.db);
    expect(await sweepIdempotencyKeys(t.db)).toBeGreaterThanOrEqual(1);
    expect(await keyRows('expired-key')).toBe(0);
    expect(await keyRows('replay-key-1')).toBe(1);
  });

  it('a request failing validation stores nothing (the key stays free); a 4xx of the operation itself is stored and replayed', async () => {
    const invalid = await create({ donor: { email: 'not an address' } }, 'validation-key');
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('idempotency-key')).toBe('validation-key');
    expect(await keyRows('validation-key')).toBe(0);
    expect((await create({ donor: { email: 'valid@example.org' } }, 'validation-key')).status).toBe(201);

    // A duplicate e-mail is the operation's own answer: final, replayed even once the first account is gone.
    await create({ donor: { email: 'taken@example.org' } }, undefined);
    const duplicate = await create({ donor: { email: 'taken@example.org' } }, 'duplicate-key');
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ code: 'conflict' });
    await t.db.deleteFrom('donor_accounts').where('email', '=', 'taken@example.org').execute();
    const replayed = await create({ donor: { email: 'taken@example.org' } }, 'duplicate-key');
    expectSameAnswer(duplicate, replayed);
    expect(replayed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await accountsWith('taken@example.org')).toBe(0);
  });

  it('a 4xx raised by a failed statement (a unique violation) is stored too: the operation ran under a savepoint of its own', async () => {
    // An uncommitted insert of the same e-mail: the service's pre-check cannot see it, so its
    // insert waits and fails with a unique violation, which aborts what the operation did; the key's
    // transaction must still store the 409.
    const raced = 'raced-idempotent@example.org';
    const fundProviderId = (await t.db.selectFrom('organizations').select('id').where('ein', '=', '983456781').executeTakeFirstOrThrow())
      .id;
    let pending: Promise<ApiResponse> | undefined;
    let settled = false;
    await t.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('donor_accounts')
        .values({
          id: 'donor_account_idempotentraced0000000000000',
          environment: 'sandbox',
          fund_provider_id: fundProviderId,
          email: raced,
        })
        .execute();
      pending = create({ donor: { email: raced } }, 'raced-key').finally(() => (settled = true));
      for (let i = 0; !settled; i += 1) {
        const { rows } = await sql<{ waiting: number }>`
          select count(*)::int as waiting from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query ilike '%insert into "donor_accounts"%'`.execute(t.db);
        if (rows[0]!.waiting > 0) break;
        if (i > 1000) throw new Error('the request never waited on the unique index');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const first = await pending!;
    expect(first.status).toBe(409);
    const replayed = await create({ donor: { email: raced } }, 'raced-key');
    expectSameAnswer(first, replayed);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a 5xx stores no key and undoes the work: a retry with the key runs afresh', async () => {
    await sql`
      create function fail_boom() returns trigger language plpgsql as $$
      begin
        if new.email = 'boom@example.org' then raise exception 'injected failure'; end if;
        return new;
      end $$`.execute(t.db);
    await sql`create trigger fail_boom after insert on donor_accounts for each row execute function fail_boom()`.execute(t.db);
    try {
      const failed = await create({ donor: { email: 'boom@example.org' } }, 'boom-key');
      expect(failed.status).toBe(500);
      expect(await keyRows('boom-key')).toBe(0);
      expect(await accountsWith('boom@example.org')).toBe(0);
    } finally {
      await sql`drop trigger fail_boom on donor_accounts`.execute(t.db);
      await sql`drop function fail_boom()`.execute(t.db);
    }
    const retried = await create({ donor: { email: 'boom@example.org' } }, 'boom-key');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await accountsWith('boom@example.org')).toBe(1);
  });

  it('the stored answer is sealed: a once-shown secret (a token code) is not at rest in the clear', async () => {
    const account = await create({ donor: { email: 'sealed@example.org' } }, undefined);
    const path = `/v1/donor_accounts/${account.body.id as string}/authorization_tokens`;
    const call = () =>
      apiRequest(server, 'sandbox', 'POST', path, { bearer: sandboxKey, json: {}, headers: { 'Idempotency-Key': 'token-key' } });
    const first = await call();
    expect(first.status).toBe(201);
    const code = first.body.code as string;
    expect(code).toBeTruthy();
    expectSameAnswer(first, await call());
    const stored = await t.db.selectFrom('idempotency_keys').select('body_sealed').where('key', '=', 'token-key').executeTakeFirstOrThrow();
    expect(stored.body_sealed).not.toContain(code);
    expect(
      await t.db
        .selectFrom('donor_authorization_tokens')
        .select('id')
        .where('donor_account_id', '=', account.body.id as string)
        .execute(),
    ).toHaveLength(1);
  });
});

describe('which operations take an Idempotency-Key', () => {
  it('every creating POST (201) does, and the served document declares the header and 409 on each', () => {
    const creating = GATEWAY_ROUTES.filter((spec) => spec.method === 'post' && spec.status === 201);
    expect(creating.map((spec) => spec.operationId)).toEqual(
      expect.arrayContaining(['create-donor-account', 'create-authorization-token']),
    );
    for (const spec of creating) expect(spec.idempotent, spec.operationId).toBe(true);
    const doc = buildOpenApiDocument(GATEWAY_ROUTES, '2026-04-01', 'http://x') as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; responses: Record<string, unknown> }>>;
    };
    for (const spec of GATEWAY_ROUTES.filter((s) => s.idempotent && s.versions.includes('2026-04-01'))) {
      const operation = doc.paths[spec.path.replace(/:(\w+)/g, '{$1}')]![spec.method]!;
      expect(operation.parameters, spec.operationId).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
      expect(operation.responses['409'], spec.operationId).toBeDefined();
    }
  });

  it("docs/api.md's Idempotency table lists exactly the operations that take the key", () => {
    const text = fs.readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = text.slice(text.indexOf('### Idempotency'), text.indexOf('\n### ', text.indexOf('### Idempotency') + 1));
    const listed = [...section.matchAll(/^\| `POST ([^`]+)` \|/gm)].map((m) => m[1]).sort();
    const taking = GATEWAY_ROUTES.filter((spec) => spec.idempotent).map((spec) => spec.path.replace(/:(\w+)/g, '{$1}'));
    expect(listed).toEqual([...new Set(taking)].sort());
  });
});
