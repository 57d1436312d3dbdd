import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { ClientAdapter } from '../../src/oidc/client-adapter.js';
import { addClient } from '../../src/oidc/clients/service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

describe('the Client model (ClientAdapter)', () => {
  it('reads a registration once for a burst of requests naming its client, and hands each caller its own copy', async () => {
    const { client_id } = await addClient(
      { db: t.db, clientsFile: path.join(tempDir(), 'clients.json'), passwordParams: MIN_PASSWORD_PARAMS },
      { environment: 'production', name: 'Burst', redirectUris: ['https://app.example.org/callback'], scopes: ['read_only'] },
    );
    const probe = new StatementProbe();
    const clients = new ClientAdapter(t.db.withPlugin(probe), 'production');
    const found = await Promise.all(Array.from({ length: 20 }, () => clients.find(client_id)));
    expect(found.every((metadata) => metadata?.client_id === client_id)).toBe(true);
    expect(new Set(found).size).toBe(20);
    expect(probe.statements.filter((text) => /oauth_clients/.test(text))).toHaveLength(1);
    // An unknown client is read once too, and is unknown to every caller.
    const unknown = await Promise.all(Array.from({ length: 5 }, () => clients.find('live_unknownclient')));
    expect(unknown).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(probe.statements.filter((text) => /oauth_clients/.test(text))).toHaveLength(2);
  });
});
