import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { generateClientSecret, hashClientSecret } from '../../src/oidc/clients/service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { tempDir } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * `clients validate` lists every problem of the clients file, each with the line and column
 * to fix: where JSON stops being JSON, and where each rule the entries break is.
 */

let t: TestDatabase;
let hash: string;
beforeAll(async () => {
  t = await createTestDatabase();
  hash = await hashClientSecret(generateClientSecret(), MIN_PASSWORD_PARAMS);
});
afterAll(async () => t?.drop());

async function problemsOf(text: string): Promise<{ file: string; problems: string[] }> {
  const file = path.join(tempDir(), 'clients.json');
  fs.writeFileSync(file, text);
  const run = await runAdmin(['clients', 'validate', '--json'], { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: file });
  expect(run.code).toBe(1);
  const out = JSON.parse(run.stdout) as { valid: boolean; problems: string[] };
  expect(out.valid).toBe(false);
  return { file, problems: out.problems };
}

/** "line L, column C" of the `occurrence`-th (1-based) appearance of `needle` in `text`. */
function positionOf(text: string, needle: string, occurrence = 1): string {
  let offset = -1;
  for (let n = 0; n < occurrence; n++) offset = text.indexOf(needle, offset + 1);
  if (offset < 0) throw new Error(`${needle} not in the text`);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

describe('clients validate points at each problem', () => {
  it('where the text stops being JSON', async () => {
    const text = '{\n  "clients": [\n    { "client_id": "live_x" "name": "X" }\n  ]\n}\n';
    const { file, problems } = await problemsOf(text);
    expect(problems).toEqual([`${file}: ${positionOf(text, '"name"')}: is not valid JSON (expected "," or "}", found "\\"")`]);

    const cut = await problemsOf('{"clients": [');
    expect(cut.problems).toEqual([`${cut.file}: line 1, column 14: is not valid JSON (expected a value, found the end of the file)`]);

    const trailing = '{\n  "clients": [],\n}\n';
    const comma = await problemsOf(trailing);
    expect(comma.problems).toEqual([
      `${comma.file}: line 3, column 1: is not valid JSON (expected a member name in double quotes, found "}")`,
    ]);
  });

  it('every rule broken, each with its own line and column', async () => {
    const good = {
      environment: 'production',
      client_id: 'live_goodclient1',
      client_secret_hash: hash,
      name: 'Good',
      redirect_uris: ['https://app.example.org/cb'],
      scopes: ['read_only'],
    };
    const entries = [
      { ...good, client_id: 'live_badthings01', scopes: ['read_only', 'admin'], colour: 'blue' },
      { ...good, client_id: 'live_badquery001', redirect_uris: ['https://app.example.org/cb', 'https://app.example.org/cb?x=1'] },
      {
        ...good,
        client_id: 'live_badlogout01',
        post_logout_redirect_uris: ['https://app.example.org/out', 'https://app.example.org/out#top'],
      },
      {
        environment: 'production',
        client_id: 'live_noname00001',
        client_secret_hash: hash,
        redirect_uris: ['https://app.example.org/cb'],
        scopes: ['read_only'],
      },
      good,
      good,
    ];
    const text = `${JSON.stringify({ revision: 0, clients: entries }, null, 2)}\n`;
    const { file, problems } = await problemsOf(text);
    const expected = [
      `${file}: ${positionOf(text, '0')}: revision: must be a whole number from 1 to 1000000000`,
      `${file}: ${positionOf(text, '"admin"')}: client live_badthings01: scopes.1: `,
      `${file}: ${positionOf(text, '"colour"')}: client live_badthings01: colour: is not a known field`,
      `${file}: ${positionOf(text, '"https://app.example.org/cb?x=1"')}: client live_badquery001: redirect_uris.1: `,
      `${file}: ${positionOf(text, '"https://app.example.org/out#top"')}: client live_badlogout01: post_logout_redirect_uris.1: https://app.example.org/out#top must not have a fragment`,
      // A missing field is at its entry's opening brace (the document's, then one per entry).
      `${file}: ${positionOf(text, '{', 5)}: client live_noname00001: name: `,
      `${file}: ${positionOf(text, '"live_goodclient1"', 2)}: client live_goodclient1: client_id: must be unique`,
    ];
    expect(problems).toHaveLength(expected.length);
    for (const start of expected)
      expect(
        problems.some((p) => p.startsWith(start)),
        `${start}\nin\n${problems.join('\n')}`,
      ).toBe(true);
  });

  it('around the list: an unknown member of the document, a clients that is no list', async () => {
    const text = '{\n  "clients": {},\n  "version": 2\n}\n';
    const { file, problems } = await problemsOf(text);
    expect(problems).toEqual([
      `${file}: line 3, column 3: version: is not a known field (a clients file holds "revision" and "clients")`,
      `${file}: line 2, column 14: clients: must be a list [...]`,
    ]);
  });

  it('a field named twice in one entry (JSON would keep only the last)', async () => {
    const text = `{"clients": [\n  {"environment": "production", "client_id": "live_twicename01", "client_secret_hash": "${hash}",\n   "name": "A", "name": "B", "redirect_uris": ["https://app.example.org/cb"], "scopes": ["read_only"]}\n]}\n`;
    const { file, problems } = await problemsOf(text);
    expect(problems).toEqual([
      `${file}: ${positionOf(text, '"name"', 2)}: client live_twicename01: name: is named twice (JSON keeps only the last; remove one)`,
    ]);
  });
});
