import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { ClientRegistrySync } from '../../src/oidc/clients/registry-sync.js';
import { judgeClientsFile, type FileState, type RegistryHead } from '../../src/oidc/clients/revision.js';
import { addClient, generateClientSecret, hashClientSecret, removeClient } from '../../src/oidc/clients/service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { HOSTS, tempDir, testApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { captureLogs } from '../helpers/log-capture.js';

/**
 * The client registry's revisions (docs/operations.md, "The clients file across machines"):
 * a process whose clients file is older than the registry, or diverges from it, never
 * replaces it; it says so once in its log and on /readyz, `clients validate` says which is
 * current, admin commands refuse to write from it, and a file that declares a higher
 * revision replaces the registry on purpose.
 */

const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()));
});

async function freshDatabase(): Promise<TestDatabase> {
  const t = await createTestDatabase();
  databases.push(t);
  return t;
}

function registry(t: TestDatabase, file: string) {
  return { db: t.db, clientsFile: file, passwordParams: MIN_PASSWORD_PARAMS };
}

async function add(t: TestDatabase, file: string, name: string): Promise<string> {
  return (
    await addClient(registry(t, file), {
      environment: 'production',
      name,
      redirectUris: ['https://app.example.org/cb'],
      scopes: ['read_only'],
    })
  ).client_id;
}

async function registeredIds(t: TestDatabase): Promise<string[]> {
  return (await t.db.selectFrom('oauth_clients').select('client_id').orderBy('client_id').execute()).map((r) => r.client_id);
}

function revisionOf(file: string): number | undefined {
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { revision?: number }).revision;
}

/** Machine A's file after two registrations, and machine B's copy of it from between them. */
async function twoMachines(t: TestDatabase) {
  const fileA = path.join(tempDir(), 'clients.json');
  const fileB = path.join(tempDir(), 'clients.json');
  const first = await add(t, fileA, 'First');
  fs.copyFileSync(fileA, fileB);
  const second = await add(t, fileA, 'Second');
  return { fileA, fileB, first, second };
}

describe('judging a clients file against the registry', () => {
  const head: RegistryHead = {
    revision: 5,
    contentHash: 'H5',
    appliedAt: new Date('2026-11-26T12:00:00Z'),
    appliedBy: 'admin clients add on a (x)',
  };
  const file = (revision: number | undefined, contentHash: string, clientIds: string[] = ['a']): FileState => ({
    exists: true,
    revision,
    contentHash,
    clientIds,
  });

  it.each([
    { case: 'the same content, whatever revision it declares', file: file(2, 'H5'), known: {}, verdict: { kind: 'current' } },
    {
      case: 'a higher revision (a deliberate replacement)',
      file: file(9, 'X'),
      known: {},
      verdict: { kind: 'apply', revision: 9, why: 'newer' },
    },
    {
      case: 'the current revision edited while no server watched',
      file: file(5, 'X'),
      known: {},
      verdict: { kind: 'apply', revision: 6, why: 'edited' },
    },
    {
      case: 'an edit of the content a running server saw current',
      file: file(undefined, 'X'),
      known: { parent: { contentHash: 'H5', revision: 5 } },
      verdict: { kind: 'apply', revision: 6, why: 'edited' },
    },
    {
      case: 'a lower revision put in place of the current file',
      file: file(3, 'X'),
      known: { parent: { contentHash: 'H5', revision: 5 } },
      verdict: { kind: 'older' },
    },
    { case: 'a lower revision', file: file(4, 'X'), known: {}, verdict: { kind: 'older' } },
    {
      case: "an earlier revision's content without a revision",
      file: file(undefined, 'H3'),
      known: { earlier: 3 },
      verdict: { kind: 'older', earlier: 3 },
    },
    { case: 'unknown content without a revision', file: file(undefined, 'X'), known: {}, verdict: { kind: 'diverging' } },
    {
      case: 'an edit of content that is no longer current',
      file: file(undefined, 'X'),
      known: { parent: { contentHash: 'H4', revision: 4 } },
      verdict: { kind: 'diverging' },
    },
  ])('$case', ({ file: state, known, verdict }) => {
    expect(judgeClientsFile(state, head, known)).toEqual(verdict);
  });

  it('with no revision recorded yet: adopts a file that keeps every client, refuses one that drops some, and no file never empties it', () => {
    const unrecorded = { contentHash: 'R', clientIds: ['a', 'b'] };
    expect(judgeClientsFile(file(undefined, 'X', ['a', 'b', 'c']), unrecorded)).toEqual({ kind: 'apply', revision: 1, why: 'first' });
    expect(judgeClientsFile(file(undefined, 'X', ['a']), unrecorded)).toEqual({ kind: 'diverging', removes: ['b'] });
    expect(judgeClientsFile({ exists: false, revision: undefined, contentHash: 'E', clientIds: [] }, unrecorded)).toEqual({
      kind: 'absent',
    });
    expect(judgeClientsFile({ exists: false, revision: undefined, contentHash: 'E', clientIds: [] }, head)).toEqual({ kind: 'absent' });
  });
});

describe('a stale clients file', () => {
  it('is not applied at start nor on any poll: no client is lost, the log says so once, /readyz names it', async () => {
    const t = await freshDatabase();
    const { fileA, fileB, first, second } = await twoMachines(t);
    expect(revisionOf(fileA)).toBe(2);
    expect(revisionOf(fileB)).toBe(1);

    const { records, logger } = captureLogs('info');
    const sync = new ClientRegistrySync(t.db, fileB, logger);
    await sync.syncNow();
    for (let pass = 0; pass < 3; pass++) await sync.poll();
    expect(await registeredIds(t)).toEqual([first, second].sort());

    const warnings = records().filter((r) => r.level === 40);
    expect(warnings, 'one warning for the same stale file').toHaveLength(1);
    expect(warnings[0]).toMatchObject({ file: fileB, file_revision: 1, registry_revision: 2, verdict: 'older' });
    expect(warnings[0]!.msg).toContain(`${fileB}: not applied`);
    expect(warnings[0]!.msg).toMatch(/revision 1\b.*revision 2\b/);
    expect(warnings[0]!.msg).toContain(fileA);
    expect(sync.warnings()).toEqual([{ code: 'clients_file_not_applied', detail: warnings[0]!.msg }]);

    // The same from a server's /readyz: 200, the warning's detail to a caller of metrics_allow, its code to anyone else.
    const server = await testApp(t.db, { clients_file: fileB });
    const ready = await request(server.app.callback()).get('/readyz').set('Host', HOSTS.api);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      warnings: [{ code: 'clients_file_not_applied', detail: expect.stringContaining(`${fileB}: not applied`) }],
    });
    const outsider = await testApp(t.db, { clients_file: fileB, metrics_allow: ['10.0.0.0/8'] });
    expect((await request(outsider.app.callback()).get('/readyz').set('Host', HOSTS.api)).body).toEqual({
      status: 'ready',
      warnings: [{ code: 'clients_file_not_applied' }],
    });
    const current = await testApp(t.db, { clients_file: fileA });
    expect((await request(current.app.callback()).get('/readyz').set('Host', HOSTS.api)).body).toEqual({ status: 'ready' });
    expect(await registeredIds(t)).toEqual([first, second].sort());
  });

  it('is refused by the admin commands, which leave the file and the registry as they were', async () => {
    const t = await freshDatabase();
    const { fileA, fileB, first, second } = await twoMachines(t);
    const before = fs.readFileSync(fileB, 'utf8');
    const env = { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: fileB };
    const added = await runAdmin(
      [
        'clients',
        'add',
        '--environment',
        'sandbox',
        '--name',
        'Late',
        '--redirect-uri',
        'http://127.0.0.1:8080/cb',
        '--scope',
        'read_only',
        '--json',
      ],
      env,
    );
    expect(added.code).toBe(1);
    expect(added.stdout).toBe('');
    expect(added.stderr).toMatch(/^almoner admin: error \(conflict\): .*not applied.*older.*revision 2.*nothing was changed/);
    expect(added.stderr.trim().split('\n')).toHaveLength(1);
    const removed = await runAdmin(['clients', 'remove', '--client-id', first, '--json'], env);
    expect(removed.code).toBe(1);
    await expect(removeClient(registry(t, fileB), first)).rejects.toThrow(/older than the client registry/);
    expect(fs.readFileSync(fileB, 'utf8')).toBe(before);
    expect(await registeredIds(t)).toEqual([first, second].sort());
    // From the current file they work as before.
    expect(
      (await runAdmin(['clients', 'remove', '--client-id', first, '--json'], { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: fileA })).code,
    ).toBe(0);
    expect(await registeredIds(t)).toEqual([second]);
    expect(revisionOf(fileA)).toBe(3);
  });

  it('is named by clients validate, which says which revision is current and where it came from', async () => {
    const t = await freshDatabase();
    const { fileA, fileB } = await twoMachines(t);
    const validate = (file: string, json = true) =>
      runAdmin(['clients', 'validate', ...(json ? ['--json'] : [])], { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: file });

    const stale = await validate(fileB);
    expect(stale.code).toBe(0);
    expect(JSON.parse(stale.stdout)).toMatchObject({
      valid: true,
      clients: 1,
      file: fileB,
      revision: 1,
      registry: { standing: 'older', revision: 2, applied_at: expect.any(String), applied_by: expect.stringContaining(fileA) },
    });
    const staleText = await validate(fileB, false);
    expect(staleText.stdout).toMatch(
      new RegExp(
        `^${fileB}: valid \\(1 clients\\)\\n${fileB}: not applied: .*older.*revision 2, applied .* by admin clients add on .*\\n$`,
      ),
    );

    const current = await validate(fileA);
    expect(JSON.parse(current.stdout)).toMatchObject({
      valid: true,
      clients: 2,
      revision: 2,
      registry: { standing: 'current', revision: 2 },
    });
    expect((await validate(fileA, false)).stdout).toBe(`${fileA}: valid (2 clients)\n`);

    // A file that declares a later revision: a server would apply it.
    const newer = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(newer, JSON.stringify({ ...JSON.parse(fs.readFileSync(fileB, 'utf8')), revision: 7 }));
    expect(JSON.parse((await validate(newer)).stdout)).toMatchObject({ revision: 7, registry: { standing: 'newer', revision: 2 } });
    // A hand-written file with other clients: diverging.
    const other = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(other, JSON.stringify({ clients: [] }));
    expect(JSON.parse((await validate(other)).stdout)).toMatchObject({ revision: null, registry: { standing: 'diverging', revision: 2 } });
  });

  it('replaces the registry on purpose when it declares a higher revision; the file it replaced is then the stale one', async () => {
    const t = await freshDatabase();
    const { fileA, fileB, first } = await twoMachines(t);
    const { records, logger } = captureLogs('info');
    const syncB = new ClientRegistrySync(t.db, fileB, logger);
    await syncB.syncNow();
    expect(syncB.warnings()).toHaveLength(1);

    const document = JSON.parse(fs.readFileSync(fileB, 'utf8')) as { revision: number; clients: unknown[] };
    fs.writeFileSync(fileB, `${JSON.stringify({ ...document, revision: 3 }, null, 2)}\n`);
    await syncB.poll();
    expect(await registeredIds(t)).toEqual([first]);
    expect(syncB.warnings()).toEqual([]);
    expect(records().map((r) => r.msg)).toContain('clients file applied as registry revision 3');

    const syncA = new ClientRegistrySync(t.db, fileA, logger);
    await syncA.syncNow();
    expect(await registeredIds(t)).toEqual([first]);
    expect(syncA.warnings()).toEqual([
      { code: 'clients_file_not_applied', detail: expect.stringMatching(/older.*revision 2;.*revision 3/) },
    ]);
  });

  it('in a running server: a hand edit of the current file is applied, an older copy put in its place is not', async () => {
    const t = await freshDatabase();
    const { fileA, fileB, first, second } = await twoMachines(t);
    const { logger } = captureLogs('info');
    const sync = new ClientRegistrySync(t.db, fileA, logger);
    await sync.syncNow();

    // A hand edit that leaves the revision as it was: applied as the next revision.
    const document = JSON.parse(fs.readFileSync(fileA, 'utf8')) as { revision: number; clients: { client_id: string; name: string }[] };
    fs.writeFileSync(
      fileA,
      JSON.stringify({ ...document, clients: document.clients.map((c) => (c.client_id === second ? { ...c, name: 'Renamed' } : c)) }),
    );
    await sync.poll();
    expect((await t.db.selectFrom('oauth_clients').select('name').where('client_id', '=', second).executeTakeFirstOrThrow()).name).toBe(
      'Renamed',
    );
    expect(
      (
        await t.db
          .selectFrom('oauth_clients_revisions')
          .select(({ fn }) => fn.max('revision').as('revision'))
          .executeTakeFirstOrThrow()
      ).revision,
    ).toBe(3);

    // The stale copy deployed over it: refused, nothing lost.
    fs.copyFileSync(fileB, fileA);
    await sync.poll();
    expect(await registeredIds(t)).toEqual([first, second].sort());
    expect(sync.warnings()).toEqual([{ code: 'clients_file_not_applied', detail: expect.stringContaining('older') }]);
  });

  it('from before revisions were recorded: a file keeping every client is adopted as revision 1, one dropping some is refused', async () => {
    const t = await freshDatabase();
    const row = async (clientId: string) => ({
      environment: 'production' as const,
      client_id: clientId,
      client_secret_hash: await hashClientSecret(generateClientSecret(), MIN_PASSWORD_PARAMS),
      name: clientId,
      redirect_uris: ['https://app.example.org/cb'],
      scopes: ['read_only'],
      subject_type: 'user' as const,
      ip_allow_list: [],
    });
    const [one, two] = [await row('live_legacy00001'), await row('live_legacy00002')];
    await t.db.insertInto('oauth_clients').values([one, two]).execute();
    const { logger } = captureLogs('info');

    const dropping = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(dropping, JSON.stringify({ clients: [one] }));
    const refused = new ClientRegistrySync(t.db, dropping, logger);
    await refused.syncNow();
    expect(await registeredIds(t)).toEqual(['live_legacy00001', 'live_legacy00002']);
    expect(refused.warnings()[0]?.detail).toMatch(/would remove live_legacy00002/);

    const keeping = path.join(tempDir(), 'clients.json');
    const three = await row('live_legacy00003');
    fs.writeFileSync(keeping, JSON.stringify({ clients: [one, two, three] }));
    const adopted = new ClientRegistrySync(t.db, keeping, logger);
    await adopted.syncNow();
    expect(adopted.warnings()).toEqual([]);
    expect(await registeredIds(t)).toEqual(['live_legacy00001', 'live_legacy00002', 'live_legacy00003']);
    expect(await t.db.selectFrom('oauth_clients_revisions').select(['revision', 'clients']).execute()).toEqual([
      { revision: 1, clients: 3 },
    ]);
  });

  it('no file at all changes nothing and is no warning', async () => {
    const t = await freshDatabase();
    const { first, second } = await twoMachines(t);
    const { records, logger } = captureLogs('info');
    const sync = new ClientRegistrySync(t.db, path.join(tempDir(), 'clients.json'), logger);
    await sync.syncNow();
    await sync.poll();
    expect(await registeredIds(t)).toEqual([first, second].sort());
    expect(sync.warnings()).toEqual([]);
    expect(records().filter((r) => /does not exist/.test(String(r.msg)))).toHaveLength(1);
  });
});
