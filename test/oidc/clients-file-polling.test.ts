import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { readClientsFile } from '../../src/oidc/clients/file-store.js';
import { ClientRegistryError } from '../../src/oidc/clients/schema.js';
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

describe('messages about the clients file', () => {
  async function validate(file: string) {
    let stdout = '';
    let stderr = '';
    const code = await runCli({
      argv: ['clients', 'validate'],
      stdout: (s) => void (stdout += s),
      stderr: (s) => void (stderr += s),
      readStdin: async () => '',
      env: { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: file },
    });
    return { code, stdout, stderr };
  }

  it('name it the same way everywhere: its full path, then a colon', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'clients.json');
    const problemsOf = (): string[] => {
      try {
        readClientsFile(file);
      } catch (error) {
        if (error instanceof ClientRegistryError) return [...error.problems];
        throw error;
      }
      return [];
    };
    const contents = ['{"clients": [', '[]', '{"clients": [{"client_id": "live_x", "colour": "blue"}]}', '{"clients": [{}, {}]}'];
    const problems: string[] = [];
    for (const text of contents) {
      fs.writeFileSync(file, text);
      problems.push(...problemsOf());
    }
    fs.rmSync(file);
    fs.mkdirSync(file);
    problems.push(...problemsOf());
    fs.rmSync(file, { recursive: true });
    expect(problems.length).toBeGreaterThan(contents.length);
    for (const problem of problems) expect(problem.startsWith(`${file}: `), problem).toBe(true);

    // The admin CLI names it the same way, valid or not.
    fs.writeFileSync(file, '{"clients": []}');
    const valid = await validate(file);
    expect(valid.stdout).toBe(`${file}: valid (0 clients)\n`);
    fs.writeFileSync(file, '[]');
    const invalid = await validate(file);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe(`almoner admin: clients file invalid: ${file}: must be an object {"clients": [...]}\n`);
  });
});
