import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashId, sweepExpired } from '../../src/db/provider-store.js';
import { PostgresAdapter } from '../../src/oidc/adapter.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const adapter = (model: string, extra: Partial<ConstructorParameters<typeof PostgresAdapter>[1]> = {}) =>
  new PostgresAdapter(model, { db: t.db, environment: 'production', ...extra });

describe('Postgres adapter', () => {
  it('stores ids and payloads without the raw id, and finds by the raw id', async () => {
    const a = adapter('AccessToken');
    await a.upsert('raw-token-value-1', { jti: 'raw-token-value-1', grantId: 'g1', scope: 'read_only', exp: 9e9 }, 900);
    const row = await t.db.selectFrom('oidc_models').selectAll().where('model', '=', 'AccessToken').executeTakeFirstOrThrow();
    expect(row.id).toBe(hashId('raw-token-value-1'));
    expect(JSON.stringify(row)).not.toContain('raw-token-value-1');
    expect(row.grant_id).toBe('g1');
    expect(await a.find('raw-token-value-1')).toMatchObject({ jti: 'raw-token-value-1', grantId: 'g1', scope: 'read_only' });
    expect(await a.find('other')).toBeUndefined();
  });

  it('keeps environments apart', async () => {
    await adapter('AccessToken').upsert('shared-id', { jti: 'shared-id' }, 900);
    const sandbox = new PostgresAdapter('AccessToken', { db: t.db, environment: 'sandbox' });
    expect(await sandbox.find('shared-id')).toBeUndefined();
  });

  it('drops the session cookie copy an Interaction carries', async () => {
    await adapter('Interaction').upsert(
      'int-1',
      { jti: 'int-1', session: { uid: 'u1', cookie: 'session-cookie-secret', accountId: 'a' } },
      60,
    );
    const row = await t.db.selectFrom('oidc_models').select('payload').where('model', '=', 'Interaction').executeTakeFirstOrThrow();
    expect(JSON.stringify(row.payload)).not.toContain('session-cookie-secret');
    expect(await adapter('Interaction').find('int-1')).toMatchObject({ session: { uid: 'u1', accountId: 'a' } });
  });

  it('finds sessions by uid', async () => {
    await adapter('Session').upsert('session-cookie', { jti: 'session-cookie', uid: 'uid-42', accountId: 'acc' }, 60);
    expect(await adapter('Session').findByUid('uid-42')).toMatchObject({ uid: 'uid-42', accountId: 'acc' });
  });

  it('lets exactly one of many concurrent consumes succeed, and reports the loser', async () => {
    const conflicts: string[] = [];
    const a = adapter('AuthorizationCode', { onConsumeConflict: async (model, grantId) => void conflicts.push(`${model}:${grantId}`) });
    await a.upsert('code-1', { jti: 'code-1', grantId: 'g-code' }, 60);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => a.consume('code-1')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(9);
    expect(rejected[0]!.reason).toMatchObject({ error: 'invalid_grant' });
    expect(conflicts).toEqual(Array(9).fill('AuthorizationCode:g-code'));
    expect(await a.find('code-1')).toHaveProperty('consumed');
  });

  it('revokes by grant id, only that grant and model', async () => {
    const rt = adapter('RefreshToken');
    await rt.upsert('rt-a', { jti: 'rt-a', grantId: 'gA' }, 60);
    await rt.upsert('rt-b', { jti: 'rt-b', grantId: 'gB' }, 60);
    await rt.revokeByGrantId('gA');
    expect(await rt.find('rt-a')).toBeUndefined();
    expect(await rt.find('rt-b')).toBeDefined();
  });

  it('sweeps expired rows in batches, keeping a grace period', async () => {
    const old = new Date(Date.now() - 3 * 86_400_000);
    await t.db
      .insertInto('oidc_models')
      .values(
        Array.from({ length: 25 }, (_, i) => ({
          environment: 'production' as const,
          model: 'AccessToken',
          id: `expired-${i}`,
          payload: '{}',
          expires_at: old,
        })),
      )
      .execute();
    await t.db
      .insertInto('oidc_models')
      .values({
        environment: 'production',
        model: 'AccessToken',
        id: 'recently-expired',
        payload: '{}',
        expires_at: new Date(Date.now() - 60_000),
      })
      .execute();
    expect(await sweepExpired(t.db, 10)).toBe(25);
    const left = await t.db.selectFrom('oidc_models').select('id').where('id', 'like', '%expired%').execute();
    expect(left.map((r) => r.id)).toEqual(['recently-expired']);
  });
});
