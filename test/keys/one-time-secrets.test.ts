import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepForOneDisplay, takeForDisplay } from '../../src/keys/one-time-secrets.js';
import { deleteExpiredOneTimeSecrets } from '../../src/keys/one-time-secrets-repository.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const scope = { purpose: 'api_key', binding: 'production:session-a:org-1' };

describe('a secret shown once', () => {
  it('is kept sealed under a hash of its id, read once by its own scope, then gone', async () => {
    const id = await keepForOneDisplay(t.db, testBox, scope, 'alm_live_secret-value', 300);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await t.db.selectFrom('one_time_secrets').selectAll().where('binding', '=', scope.binding).execute();
    expect(row!.id).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.id).not.toContain(id);
    expect(row!.sealed).toMatch(/^enc:v1:/);
    expect(JSON.stringify(row)).not.toContain('secret-value');
    // Another session, another organization, another purpose: nothing, and the secret stays for its own.
    for (const other of [
      { ...scope, binding: 'production:session-b:org-1' },
      { ...scope, binding: 'production:session-a:org-2' },
      { ...scope, purpose: 'webhook_secret' },
    ]) {
      expect(await takeForDisplay(t.db, testBox, other, id)).toBeUndefined();
    }
    const taken = await Promise.all([takeForDisplay(t.db, testBox, scope, id), takeForDisplay(t.db, testBox, scope, id)]);
    expect(taken.filter((v) => v !== undefined)).toEqual(['alm_live_secret-value']);
    expect(await takeForDisplay(t.db, testBox, scope, id)).toBeUndefined();
  });

  it('is never shown after its minutes, and the sweep removes it; ids of any other shape read nothing', async () => {
    const id = await keepForOneDisplay(t.db, testBox, scope, 'late', 300);
    await t.db
      .updateTable('one_time_secrets')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .execute();
    expect(await takeForDisplay(t.db, testBox, scope, id)).toBeUndefined();
    expect(await deleteExpiredOneTimeSecrets(t.db)).toBeGreaterThanOrEqual(1);
    expect(await t.db.selectFrom('one_time_secrets').selectAll().execute()).toHaveLength(0);
    for (const bad of [undefined, '', 'x', ['a'], `${id}=`, "'; drop table one_time_secrets; --"])
      expect(await takeForDisplay(t.db, testBox, scope, bad)).toBeUndefined();
  });
});
