import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SHAPES, piece, PreparedShapes, preparedName, preparedText, runNamed } from '../../src/db/prepared-statements.js';
import type { Executor } from '../../src/db/executor.js';
import { commitText, commitUnit } from '../../src/oidc/unit-of-work-repository.js';
import { TOKEN_REQUEST, UnitOfWork } from '../../src/oidc/unit-of-work.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { StatementProbe } from '../helpers/statement-probe.js';

/**
 * The token unit's statements (src/oidc/unit-of-work-repository.ts): texts built once per
 * shape and run by name (src/db/prepared-statements.ts, runNamed), writing what the unit holds.
 */

let t: TestDatabase;
let userId: string;
let organizationId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  userId = (
    await sql<{ id: string }>`insert into users (email, password_hash) values ('statements@example.org', 'x') returning id`.execute(t.db)
  ).rows[0]!.id;
  organizationId = (
    await sql<{
      id: string;
    }>`insert into organizations (kind, ein, name) values ('nonprofit', '123456789', 'Statements') returning id`.execute(t.db)
  ).rows[0]!.id;
});
afterAll(async () => t?.drop());

const shape = { consume: true, saves: 2, audits: 1, used: true, successor: true };

describe('token unit statement texts', () => {
  it('are built once per shape: the same text for the same shape, another for another', () => {
    const first = commitText(shape);
    expect(commitText({ ...shape })).toBe(first);
    expect(first.name).toMatch(/^token_unit_/);
    expect(preparedName(first.text)).toBe(first.name);
    const others = [
      { ...shape, consume: false },
      { ...shape, saves: 3 },
      { ...shape, audits: 0 },
      { ...shape, used: false },
      { ...shape, successor: false },
    ].map(commitText);
    expect(new Set([first, ...others].map((text) => text.text)).size).toBe(6);
    // One parameter per value the commit passes, numbered in order.
    expect(first.text.match(/\$\d+/g)).toEqual(Array.from({ length: 3 + 2 * 7 + 8 + 1 + 4 }, (_, i) => `$${i + 1}`));
  });

  it(`keep at most ${MAX_SHAPES} shapes of a statement; a further shape is built on each call, and still runs`, async () => {
    const shapes = new PreparedShapes('test_token_unit_shapes');
    const build = (n: number) => () => [piece`select ${'n'}::int + `, `${n} as n`];
    for (let n = 0; n < MAX_SHAPES + 5; n += 1) expect(shapes.text(`n${n}`, build(n)).text).toBe(`select $1::int + ${n} as n`);
    expect(shapes.size).toBe(MAX_SHAPES);
    expect(shapes.text('n0', build(0))).toBe(shapes.text('n0', build(0)));
    const past = shapes.text(`n${MAX_SHAPES + 1}`, build(MAX_SHAPES + 1));
    expect(shapes.text(`n${MAX_SHAPES + 1}`, build(MAX_SHAPES + 1))).not.toBe(past);
    expect(await runNamed(t.db, past, [1])).toEqual([{ n: MAX_SHAPES + 2 }]);
  });
});

describe('runNamed', () => {
  // A text of this file's own: a text has one name, the first family's that registered it, and
  // test files share a worker's registry (isolate: false).
  const answer = preparedText('test_run_named', [piece`select ${'n'}::int + 1 as n, ${'label'}::text as label /* runNamed */`]);

  it('runs a prepared text as its named statement, with its values in order', async () => {
    const result = await t.db.connection().execute(async (conn) => {
      const rows = await runNamed(conn, answer, [41, 'a']);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn);
      return { rows, prepared: prepared.rows.map((r) => r.name) };
    });
    expect(result.rows).toEqual([{ n: 42, label: 'a' }]);
    expect(answer.name).toMatch(/^test_run_named_/);
    expect(result.prepared).toContain(answer.name);
  });

  it("runs on the transaction's connection", async () => {
    const insert = preparedText('test_run_named', [piece`insert into audit_events (event, request_id) values ('token.issued', ${'id'})`]);
    await expect(
      t.db.transaction().execute(async (trx) => {
        await runNamed(trx, insert, ['run-named-rolled-back']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const rows = await t.db.selectFrom('audit_events').select('id').where('request_id', '=', 'run-named-rolled-back').execute();
    expect(rows).toEqual([]);
  });

  it('shows its statement to Kysely plugins as any query, with the same text and values', async () => {
    const probe = new StatementProbe();
    expect(await runNamed(t.db.withPlugin(probe), answer, [1, 'b'])).toEqual([{ n: 2, label: 'b' }]);
    expect(probe.probed).toEqual([{ text: answer.text, parameters: [1, 'b'], inRequest: false }]);
  });
});

describe('a commit of each shape', () => {
  let serial = 0;
  const unitOf = (parts: { consume?: string; saves?: number; audits?: number; used?: string; successor?: boolean }) => {
    const n = (serial += 1);
    const unit = new UnitOfWork(TOKEN_REQUEST, { address: '192.0.2.1', dpopProof: undefined });
    if (parts.consume) unit.consume = { model: 'RefreshToken', id: parts.consume };
    for (let i = 0; i < (parts.saves ?? 0); i += 1)
      unit.write(`AccessToken:s${n}-${i}`, {
        op: 'upsert',
        row: {
          environment: 'production',
          model: 'AccessToken',
          id: `s${n}-${i}`,
          payload: JSON.stringify({ jti: `s${n}-${i}`, n: i }),
          grant_id: `grant-${n}`,
          uid: i === 0 ? null : `uid-${n}`,
          expires_at: new Date(Date.UTC(2030, 0, 1, 0, 0, i)),
        },
      });
    for (let i = 0; i < (parts.audits ?? 0); i += 1)
      unit.audits.push({
        event: 'token.issued',
        environment: 'production',
        organizationId: i === 0 ? organizationId : undefined,
        clientId: 'client',
        ip: i === 0 ? '192.0.2.1' : '',
        requestId: `request-${n}`,
        details: i === 0 ? { grantId: `grant-${n}` } : undefined,
      });
    if (parts.used) unit.usedGrantId = parts.used;
    if (parts.successor) unit.successor = { id: `successor-${n}`, ciphertext: `sealed-${n}`, expiresAt: new Date(Date.UTC(2030, 0, 2)) };
    return { unit, n };
  };

  const consumable = async (id: string) => {
    await t.db
      .insertInto('oidc_models')
      .values({
        environment: 'production',
        model: 'RefreshToken',
        id,
        payload: JSON.stringify({ jti: id }),
        grant_id: null,
        uid: null,
        expires_at: null,
      })
      .execute();
  };
  const authorization = async (grantId: string) => {
    await t.db
      .insertInto('oauth_authorizations')
      .values({
        grant_id: grantId,
        environment: 'production',
        client_id: 'client',
        subject_type: 'user',
        user_id: userId,
        organization_id: organizationId,
        scopes: ['read_only'],
        expires_at: new Date(Date.UTC(2030, 0, 1)),
      })
      .execute();
  };
  const written = async (n: number) => ({
    models: await t.db
      .selectFrom('oidc_models')
      .select(['id', 'payload', 'grant_id', 'uid', 'expires_at', 'consumed_at'])
      .where('grant_id', '=', `grant-${n}`)
      .orderBy('id')
      .execute(),
    audits: await t.db
      .selectFrom('audit_events')
      .select(['event', 'environment', 'actor_user_id', 'organization_id', 'client_id', 'ip', 'request_id', 'details'])
      .where('request_id', '=', `request-${n}`)
      .orderBy('id')
      .execute(),
    successors: await t.db
      .selectFrom('oidc_refresh_successors')
      .select(['id', 'ciphertext', 'expires_at'])
      .where('id', '=', `successor-${n}`)
      .execute(),
  });

  // With no plugin (as served) and with one (as the tests' probe sees it).
  for (const plugged of [false, true]) {
    const db = () => (plugged ? t.db.withPlugin(new StatementProbe()) : t.db);

    it(`a refresh's (consume, saves, audit, last use, successor) writes them all, once${plugged ? ' (with a plugin)' : ''}`, async () => {
      const consumed = `refresh-${plugged}`;
      await consumable(consumed);
      await authorization(`authorization-${plugged}`);
      const { unit, n } = unitOf({ consume: consumed, saves: 2, audits: 2, used: `authorization-${plugged}`, successor: true });
      expect(await commitUnit(db(), 'production', unit)).toBe(true);
      const rows = await written(n);
      expect(rows.models).toEqual([
        {
          id: `s${n}-0`,
          payload: { jti: `s${n}-0`, n: 0 },
          grant_id: `grant-${n}`,
          uid: null,
          expires_at: new Date(Date.UTC(2030, 0, 1)),
          consumed_at: null,
        },
        {
          id: `s${n}-1`,
          payload: { jti: `s${n}-1`, n: 1 },
          grant_id: `grant-${n}`,
          uid: `uid-${n}`,
          expires_at: new Date(Date.UTC(2030, 0, 1, 0, 0, 1)),
          consumed_at: null,
        },
      ]);
      expect(rows.audits).toEqual([
        {
          event: 'token.issued',
          environment: 'production',
          actor_user_id: null,
          organization_id: organizationId,
          client_id: 'client',
          ip: '192.0.2.1',
          request_id: `request-${n}`,
          details: { grantId: `grant-${n}` },
        },
        {
          event: 'token.issued',
          environment: 'production',
          actor_user_id: null,
          organization_id: null,
          client_id: 'client',
          ip: null,
          request_id: `request-${n}`,
          details: {},
        },
      ]);
      expect(rows.successors).toEqual([{ id: `successor-${n}`, ciphertext: `sealed-${n}`, expires_at: new Date(Date.UTC(2030, 0, 2)) }]);
      const consumedRow = await t.db.selectFrom('oidc_models').select('consumed_at').where('id', '=', consumed).executeTakeFirstOrThrow();
      expect(consumedRow.consumed_at).toBeInstanceOf(Date);
      const used = await t.db
        .selectFrom('oauth_authorizations')
        .select('last_used_at')
        .where('grant_id', '=', `authorization-${plugged}`)
        .executeTakeFirstOrThrow();
      expect(used.last_used_at).toBeInstanceOf(Date);

      // The same consume again loses: nothing of a second unit is written.
      const again = unitOf({ consume: consumed, saves: 1, audits: 1, used: `authorization-${plugged}`, successor: true });
      expect(await commitUnit(db(), 'production', again.unit)).toBe(false);
      expect(await written(again.n)).toEqual({ models: [], audits: [], successors: [] });
    });

    it(`a code exchange's shape (consume, three saves, audit, last use) and one without a consume write theirs${plugged ? ' (with a plugin)' : ''}`, async () => {
      const consumed = `code-${plugged}`;
      await consumable(consumed);
      const exchange = unitOf({ consume: consumed, saves: 3, audits: 1, used: 'no-such-authorization' });
      expect(await commitUnit(db(), 'production', exchange.unit)).toBe(true);
      const rows = await written(exchange.n);
      expect(rows.models.map((r) => r.id)).toEqual([0, 1, 2].map((i) => `s${exchange.n}-${i}`));
      expect(rows.audits).toHaveLength(1);
      expect(rows.successors).toEqual([]);

      const unconsumed = unitOf({ saves: 1, audits: 1 });
      expect(await commitUnit(db(), 'production', unconsumed.unit)).toBe(true);
      const other = await written(unconsumed.n);
      expect(other.models.map((r) => r.id)).toEqual([`s${unconsumed.n}-0`]);
      expect(other.audits).toHaveLength(1);

      const auditOnly = unitOf({ audits: 1 });
      expect(await commitUnit(db(), 'production', auditOnly.unit)).toBe(true);
      expect((await written(auditOnly.n)).audits).toHaveLength(1);
    });
  }

  it('is written in a transaction with the unit’s other writes', async () => {
    const { unit, n } = unitOf({ saves: 1, audits: 1 });
    unit.together.push(async (trx: Executor) => {
      await sql`insert into audit_events (event, request_id) values ('token.issued', ${`together-${n}`})`.execute(trx);
      throw new Error('together failed');
    });
    await expect(commitUnit(t.db, 'production', unit)).rejects.toThrow('together failed');
    expect(await written(n)).toEqual({ models: [], audits: [], successors: [] });
  });
});
