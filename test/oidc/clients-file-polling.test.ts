import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientRegistrySync } from '../../src/oidc/clients/registry-sync.js';
import { tempDir } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { captureLogs } from '../helpers/log-capture.js';

/**
 * The running server's poller over config/clients.json, driven pass by pass (poll() is what
 * its timer runs): a bad hand edit is reported once per change of the file, not on every pass.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

describe('clients file polling', () => {
  it('reports a malformed file once per change, its repair once, and logs the error with message and stack', async () => {
    const file = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(file, '{"clients": []}\n');
    const { records, logger } = captureLogs('info');
    const sync = new ClientRegistrySync(t.db, file, logger);
    await sync.syncNow();
    const reports = () => records().filter((r) => r.level === 50);

    fs.writeFileSync(file, '{"clients": [');
    for (let pass = 0; pass < 5; pass++) await sync.poll();
    expect(reports(), 'the same broken file, five passes: one report').toHaveLength(1);
    const err = reports()[0]!.err as Record<string, string>;
    expect(reports()[0]!.file).toBe(file);
    expect(err.type).toBe('ClientRegistryError');
    expect(err.message).toMatch(/clients\.json.*not valid JSON/);
    expect(err.stack).toMatch(/\n\s+at /);

    // Another broken content is a change: reported once more.
    fs.writeFileSync(file, '{"clients": [{"client_id": 1}]}');
    for (let pass = 0; pass < 5; pass++) await sync.poll();
    expect(reports()).toHaveLength(2);
    expect((reports()[1]!.err as Record<string, string>).message).toMatch(/client_id/);

    // Fixed: said once; broken again the same way as before: reported again (it is a new change).
    fs.writeFileSync(file, '{"clients": []}\n');
    for (let pass = 0; pass < 3; pass++) await sync.poll();
    expect(records().filter((r) => r.msg === 'clients file applied again')).toHaveLength(1);
    fs.writeFileSync(file, '{"clients": [');
    for (let pass = 0; pass < 3; pass++) await sync.poll();
    expect(reports()).toHaveLength(3);
  });
});
