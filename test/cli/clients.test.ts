import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import argon2 from 'argon2';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { tempDir } from '../helpers/app.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { childEnv, PROJECT_ROOT } from '../helpers/process.js';
import { invocationDirectory } from '../../src/config/invocation-directory.js';

const execFileAsync = promisify(execFile);

let t: TestDatabase;
let clientsFile: string;
beforeAll(async () => {
  t = await createTestDatabase();
  clientsFile = path.join(tempDir(), 'clients.json');
});
afterAll(async () => t?.drop());

async function admin(argv: string[], file = clientsFile) {
  return runAdmin(argv, { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: file });
}

/** --json prints exactly one JSON object and nothing else. */
function oneObject(stdout: string): Record<string, unknown> {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.trim().split('\n')).toHaveLength(1);
  const value: unknown = JSON.parse(stdout);
  expect(value).toBeTypeOf('object');
  expect(value).not.toBeNull();
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}

/** A failed command: non-zero, nothing on stdout, one line on stderr, no stack trace. */
function oneLineFailure(r: { code: number; stdout: string; stderr: string }) {
  expect(r.code).not.toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)/m);
}

interface FileEntry {
  client_id: string;
  client_secret_hash: string;
  environment: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  subject_type: string;
  ip_allow_list: string[];
  logo_uri?: string;
}

function readFile(file = clientsFile): { clients: FileEntry[] } {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as { clients: FileEntry[] };
}

function row(clientId: string) {
  return t.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

function add(extra: string[], environment = 'sandbox') {
  return admin(['clients', 'add', '--environment', environment, '--name', 'Test App', ...extra, '--json']);
}

const sandboxArgs = ['--redirect-uri', 'http://127.0.0.1:8080/cb', '--scope', 'read_only', '--scope', 'openid'];

describe('clients add', () => {
  it('prints exactly one JSON object with client_id, client_secret and environment; stores only an argon2id hash', async () => {
    const r = await add(sandboxArgs);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = oneObject(r.stdout);
    expect(out).toEqual(
      expect.objectContaining({ client_id: expect.any(String), client_secret: expect.any(String), environment: 'sandbox' }),
    );
    const clientId = out.client_id as string;
    const secret = out.client_secret as string;
    expect(clientId.length).toBeGreaterThanOrEqual(8);
    expect(secret.length).toBeGreaterThanOrEqual(32);

    const text = fs.readFileSync(clientsFile, 'utf8');
    expect(text).not.toContain(secret);
    const entry = readFile().clients.find((c) => c.client_id === clientId)!;
    expect(entry).toBeDefined();
    expect(entry).toMatchObject({
      environment: 'sandbox',
      name: 'Test App',
      redirect_uris: ['http://127.0.0.1:8080/cb'],
      subject_type: 'user',
    });
    expect([...entry.scopes].sort()).toEqual(['openid', 'read_only']);
    expect(entry.client_secret_hash.startsWith('$argon2id$')).toBe(true);
    expect(entry.client_secret_hash).not.toContain(secret);
    expect(await argon2.verify(entry.client_secret_hash, secret)).toBe(true);
    expect(await argon2.verify(entry.client_secret_hash, `${secret}x`)).toBe(false);

    const dbRow = await row(clientId);
    expect(dbRow).toBeDefined();
    expect(dbRow!.client_secret_hash).toBe(entry.client_secret_hash);
    expect(dbRow!.environment).toBe('sandbox');
    expect(dbRow!.redirect_uris).toEqual(['http://127.0.0.1:8080/cb']);
    expect(JSON.stringify(dbRow)).not.toContain(secret);
  });

  it('accepts --scope as one space-separated value', async () => {
    const r = await add(['--redirect-uri', 'http://localhost:3000/callback', '--scope', 'read_only openid']);
    expect(r.code).toBe(0);
    const out = oneObject(r.stdout);
    const entry = readFile().clients.find((c) => c.client_id === out.client_id)!;
    expect([...entry.scopes].sort()).toEqual(['openid', 'read_only']);
    expect([...(await row(out.client_id as string))!.scopes].sort()).toEqual(['openid', 'read_only']);
  });

  it('registers a production client with every optional field, and issues distinct ids and secrets', async () => {
    const r = await add(
      [
        '--redirect-uri',
        'https://app.example.org/cb',
        '--redirect-uri',
        'https://app.example.org/cb2',
        '--scope',
        'read_only',
        '--scope',
        'read_write',
        '--logo-uri',
        'https://app.example.org/logo.png',
        '--subject-type',
        'organization',
        '--ip-allow-list',
        '203.0.113.0/24',
        '--ip-allow-list',
        '2001:db8::/32',
        '--require-mfa',
      ],
      'production',
    );
    expect(r.stderr).toBe('');
    const out = oneObject(r.stdout);
    expect(out.environment).toBe('production');
    const entry = readFile().clients.find((c) => c.client_id === out.client_id)!;
    expect(entry).toMatchObject({
      environment: 'production',
      redirect_uris: ['https://app.example.org/cb', 'https://app.example.org/cb2'],
      logo_uri: 'https://app.example.org/logo.png',
      subject_type: 'organization',
      ip_allow_list: ['203.0.113.0/24', '2001:db8::/32'],
      require_mfa: true,
    });
    expect(
      (
        await t.db
          .selectFrom('oauth_clients')
          .select('require_mfa')
          .where('client_id', '=', out.client_id as string)
          .executeTakeFirstOrThrow()
      ).require_mfa,
    ).toBe(true);
    const other = oneObject((await add(sandboxArgs)).stdout);
    expect(other.client_id).not.toBe(out.client_id);
    expect(other.client_secret).not.toBe(out.client_secret);
  });

  it("registers post-logout redirect URIs (--post-logout-redirect-uri, repeatable) under the redirect URIs' rules; none by default", async () => {
    const r = await add(
      [
        '--redirect-uri',
        'https://app.example.org/cb',
        '--post-logout-redirect-uri',
        'https://app.example.org/signed-out',
        '--post-logout-redirect-uri',
        'https://app.example.org/bye',
        '--scope',
        'openid',
      ],
      'production',
    );
    expect(r.stderr).toBe('');
    const out = oneObject(r.stdout);
    const uris = ['https://app.example.org/signed-out', 'https://app.example.org/bye'];
    expect(readFile().clients.find((c) => c.client_id === out.client_id)).toMatchObject({ post_logout_redirect_uris: uris });
    expect((await row(out.client_id as string))!.post_logout_redirect_uris).toEqual(uris);
    // Without the option: none, and sign-out ends on Almoner's own page.
    const plain = oneObject((await add(sandboxArgs)).stdout);
    expect((await row(plain.client_id as string))!.post_logout_redirect_uris).toEqual([]);

    const before = fs.readFileSync(clientsFile, 'utf8');
    for (const [uris, rule] of [
      [
        ['https://app.example.org/out?next=1'],
        /post_logout_redirect_uris\.0: https:\/\/app\.example\.org\/out\?next=1 must not have a query string/,
      ],
      [['http://app.example.org/out'], /post_logout_redirect_uris\.0: .* must use https/],
      [['https://app.example.org/out', 'https://app.example.org/'], /post_logout_redirect_uris\.1: .* must have a path beyond "\/"/],
      [
        [1, 2, 3, 4, 5, 6].map((i) => `https://app.example.org/out${i}`),
        /post_logout_redirect_uris: at most 5 post-logout redirect URIs per client/,
      ],
    ] as [string[], RegExp][]) {
      const refused = await add(
        ['--redirect-uri', 'https://app.example.org/cb', ...uris.flatMap((u) => ['--post-logout-redirect-uri', u]), '--scope', 'openid'],
        'production',
      );
      oneLineFailure(refused);
      expect(refused.stderr).toMatch(rule);
    }
    expect(fs.readFileSync(clientsFile, 'utf8')).toBe(before);
  });

  it('prints the secret in text mode too, without JSON', async () => {
    const textRun = await admin(['clients', 'add', '--environment', 'sandbox', '--name', 'Text', ...sandboxArgs]);
    expect(textRun.code).toBe(0);
    expect(textRun.stdout).toMatch(/client_id:\s+\S+/);
    expect(textRun.stdout).toMatch(/client_secret:\s+\S+/);
  });

  const rejected: { label: string; environment: string; uris: string[]; rule: RegExp }[] = [
    { label: 'http in production', environment: 'production', uris: ['http://app.example.org/cb'], rule: /must use https/ },
    {
      label: 'http to a non-loopback host in the sandbox',
      environment: 'sandbox',
      uris: ['http://app.example.org/cb'],
      rule: /must use https/,
    },
    { label: 'no path', environment: 'production', uris: ['https://app.example.org'], rule: /path beyond/ },
    { label: 'root path only', environment: 'production', uris: ['https://app.example.org/'], rule: /path beyond/ },
    { label: 'query', environment: 'production', uris: ['https://app.example.org/cb?x=1'], rule: /query/ },
    { label: 'fragment', environment: 'production', uris: ['https://app.example.org/cb#x'], rule: /fragment/ },
    { label: 'empty fragment', environment: 'production', uris: ['https://app.example.org/cb#'], rule: /fragment/ },
    { label: 'user info', environment: 'production', uris: ['https://user:pw@app.example.org/cb'], rule: /user info/ },
    {
      label: '256 characters',
      environment: 'production',
      uris: [`https://app.example.org/${'a'.repeat(256 - 'https://app.example.org/'.length)}`],
      rule: /at most 255/,
    },
    {
      label: '6 URIs',
      environment: 'production',
      uris: [1, 2, 3, 4, 5, 6].map((i) => `https://app.example.org/cb${i}`),
      rule: /at most 5/,
    },
    { label: 'a wildcard', environment: 'production', uris: ['https://*.example.org/cb'], rule: /wildcard/ },
  ];

  it.each(rejected)(
    'rejects a redirect URI with $label, naming the rule, and leaves the file unchanged',
    async ({ environment, uris, rule }) => {
      expect(fs.existsSync(clientsFile)).toBe(true);
      const before = fs.readFileSync(clientsFile, 'utf8');
      const rowsBefore = await t.db.selectFrom('oauth_clients').select('client_id').execute();
      const r = await add([...uris.flatMap((u) => ['--redirect-uri', u]), '--scope', 'read_only'], environment);
      oneLineFailure(r);
      expect(r.stderr).toMatch(rule);
      expect(fs.readFileSync(clientsFile, 'utf8')).toBe(before);
      expect(await t.db.selectFrom('oauth_clients').select('client_id').execute()).toHaveLength(rowsBefore.length);
    },
  );

  it('accepts exactly 5 redirect URIs and a 255-character one', async () => {
    const five = [1, 2, 3, 4, 5].map((i) => `https://app.example.org/cb${i}`);
    const long = `https://app.example.org/${'a'.repeat(255 - 'https://app.example.org/'.length)}`;
    expect(long).toHaveLength(255);
    expect((await add([...five.flatMap((u) => ['--redirect-uri', u]), '--scope', 'read_only'], 'production')).code).toBe(0);
    expect((await add(['--redirect-uri', long, '--scope', 'read_only'], 'production')).code).toBe(0);
  });

  it('rejects openid for an organization-subject client', async () => {
    const before = fs.readFileSync(clientsFile, 'utf8');
    const r = await add(
      ['--redirect-uri', 'https://app.example.org/cb', '--scope', 'read_only openid', '--subject-type', 'organization'],
      'production',
    );
    oneLineFailure(r);
    expect(r.stderr).toMatch(/openid/);
    expect(r.stderr).toMatch(/organization/);
    expect(fs.readFileSync(clientsFile, 'utf8')).toBe(before);
  });

  it('rejects an unknown scope, an unknown subject type and a non-https logo', async () => {
    const before = fs.readFileSync(clientsFile, 'utf8');
    const unknownScope = await add(
      ['--redirect-uri', 'https://app.example.org/cb', '--scope', 'read_only', '--scope', 'admin'],
      'production',
    );
    oneLineFailure(unknownScope);
    expect(unknownScope.stderr).toMatch(/scope/);
    const subject = await add(
      ['--redirect-uri', 'https://app.example.org/cb', '--scope', 'read_only', '--subject-type', 'robot'],
      'production',
    );
    oneLineFailure(subject);
    expect(subject.stderr).toMatch(/--subject-type must be user or organization/);
    expect(subject.code).toBe(2);
    const logo = await add(
      ['--redirect-uri', 'https://app.example.org/cb', '--scope', 'read_only', '--logo-uri', 'http://app.example.org/logo.png'],
      'production',
    );
    oneLineFailure(logo);
    expect(logo.stderr).toMatch(/logo_uri/);
    expect(fs.readFileSync(clientsFile, 'utf8')).toBe(before);
  });

  it('exits 2 with the usage line when --environment is missing or unknown, or nothing to register', async () => {
    const missing = await admin([
      'clients',
      'add',
      '--name',
      'X',
      '--redirect-uri',
      'https://app.example.org/cb',
      '--scope',
      'read_only',
      '--json',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/--environment/);
    expect(missing.stderr).toMatch(/usage: .*clients add/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    const unknown = await admin([
      'clients',
      'add',
      '--environment',
      'staging',
      '--name',
      'X',
      '--redirect-uri',
      'https://app.example.org/cb',
      '--scope',
      'read_only',
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--environment/);
    const noUri = await admin(['clients', 'add', '--environment', 'production', '--name', 'X', '--scope', 'read_only']);
    expect(noUri.code).toBe(2);
    expect(noUri.stderr).toMatch(/--redirect-uri/);
    const noScope = await admin([
      'clients',
      'add',
      '--environment',
      'production',
      '--name',
      'X',
      '--redirect-uri',
      'https://app.example.org/cb',
    ]);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toMatch(/--scope/);
  });
});

describe('clients add --profile fapi2: keys instead of a secret', () => {
  const fapi2Args = ['--profile', 'fapi2', '--redirect-uri', 'http://127.0.0.1:8080/cb', '--scope', 'openid', '--scope', 'read_only'];
  const fapi2 = (extra: string[], cwd?: string) =>
    runAdmin(
      ['clients', 'add', '--environment', 'sandbox', '--name', 'Bank Data App', ...fapi2Args, ...extra, '--json'],
      { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: clientsFile },
      '',
      cwd,
    );
  const entryOf = (clientId: unknown) =>
    (readFile().clients as unknown as { client_id: string; profile?: string; jwks?: { keys: Record<string, unknown>[] } }[]).find(
      (c) => c.client_id === clientId,
    );

  it('--generate-keys writes the private key (mode 0600) to the file named from the current directory, registers the public key, and --json prints client_id, environment, profile, keys_file and kid: no secret', async () => {
    const dir = tempDir();
    const r = await fapi2(['--generate-keys', 'aggregator-keys.json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = oneObject(r.stdout);
    const file = path.join(dir, 'aggregator-keys.json');
    expect(out).toEqual({
      client_id: expect.any(String),
      environment: 'sandbox',
      profile: 'fapi2',
      keys_file: file,
      kid: expect.any(String),
    });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const privateSet = JSON.parse(fs.readFileSync(file, 'utf8')) as { keys: Record<string, string>[] };
    expect(privateSet.keys).toHaveLength(1);
    const privateJwk = privateSet.keys[0]!;
    expect(privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: out.kid, d: expect.any(String) });
    expect(await jose.calculateJwkThumbprint(privateJwk)).toBe(out.kid);

    // The registration holds the public half only, under the same kid, in the file and the database.
    const entry = entryOf(out.client_id)!;
    expect(entry.profile).toBe('fapi2');
    expect(entry).not.toHaveProperty('client_secret_hash');
    const { d: _d, ...publicJwk } = privateJwk;
    expect(entry.jwks).toEqual({ keys: [publicJwk] });
    expect((await row(out.client_id as string))!.jwks).toEqual({ keys: [publicJwk] });

    // What the private key signs, the registered key verifies: a client assertion would pass.
    const assertion = await new jose.SignJWT({ sub: out.client_id as string })
      .setProtectedHeader({ alg: 'ES256', kid: out.kid as string })
      .sign(await jose.importJWK(privateJwk, 'ES256'));
    await expect(jose.jwtVerify(assertion, await jose.importJWK(entry.jwks!.keys[0]!, 'ES256'))).resolves.toBeTruthy();
  });

  it('prints the key file and kid in text mode, and never a secret', async () => {
    const dir = tempDir();
    const r = await runAdmin(
      ['clients', 'add', '--environment', 'sandbox', '--name', 'Bank Data App', ...fapi2Args, '--generate-keys', 'k.json'],
      { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: clientsFile },
      '',
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^client_id: test_/);
    expect(r.stdout).toContain(`keys_file: ${path.join(dir, 'k.json')}`);
    expect(r.stdout).not.toMatch(/client_secret/);
  });

  it('never overwrites an existing file: exit 1 naming the full path, the file unchanged, nothing registered', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'keys.json'), 'an earlier key');
    const before = readFile().clients.length;
    const r = await fapi2(['--generate-keys', 'keys.json'], dir);
    oneLineFailure(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error (conflict): --generate-keys keys.json: ${path.join(dir, 'keys.json')} exists already`);
    expect(fs.readFileSync(path.join(dir, 'keys.json'), 'utf8')).toBe('an earlier key');
    expect(readFile().clients).toHaveLength(before);
  });

  it('removes the key file again when the registration is refused', async () => {
    const dir = tempDir();
    const r = await runAdmin(
      ['clients', 'add', '--environment', 'production', '--name', 'Bank Data App', ...fapi2Args, '--generate-keys', 'keys.json', '--json'],
      { DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: clientsFile },
      '',
      dir,
    );
    // An http redirect URI is for the sandbox only.
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/redirect_uris/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('--jwks-file is read from the directory the command was run from, and a missing file names the full path tried', async () => {
    const dir = tempDir();
    const pair = await jose.generateKeyPair('ES256', { extractable: true });
    const publicJwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'k1', use: 'sig' };
    fs.writeFileSync(path.join(dir, 'public-keys.json'), JSON.stringify({ keys: [publicJwk] }));
    const r = await fapi2(['--jwks-file', 'public-keys.json'], dir);
    expect(r.code, r.stderr).toBe(0);
    const out = oneObject(r.stdout);
    expect(out).toEqual({ client_id: expect.any(String), environment: 'sandbox', profile: 'fapi2' });
    expect(entryOf(out.client_id)!.jwks).toEqual({ keys: [publicJwk] });

    const missing = await fapi2(['--jwks-file', 'no-such-keys.json'], dir);
    oneLineFailure(missing);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--jwks-file no-such-keys.json: cannot read ${path.join(dir, 'no-such-keys.json')} (ENOENT)`);
  });

  it('under `npm run admin`, which runs in the repository root, relative paths start in the directory npm was started from (INIT_CWD)', async () => {
    expect(invocationDirectory({ npm_lifecycle_event: 'admin', INIT_CWD: '/home/me/keys' }, '/srv/almoner')).toBe('/home/me/keys');
    // Another npm script's INIT_CWD says nothing about where this CLI was started.
    expect(invocationDirectory({ npm_lifecycle_event: 'test', INIT_CWD: '/home/me' }, '/srv/almoner')).toBe('/srv/almoner');
    expect(invocationDirectory({}, '/srv/almoner')).toBe('/srv/almoner');

    // The real thing: npm started outside the repository (--prefix names it), the key file written beside the caller.
    const dir = tempDir();
    const args = [
      'clients',
      'add',
      '--environment',
      'sandbox',
      '--name',
      'Bank Data App',
      ...fapi2Args,
      '--generate-keys',
      'npm-keys.json',
    ];
    const { stdout } = await execFileAsync('npm', ['--prefix', PROJECT_ROOT, 'run', '-s', 'admin', '--', ...args, '--json'], {
      cwd: dir,
      env: childEnv({ DATABASE_URL: t.url, ALMONER_CLIENTS_FILE: clientsFile }),
      timeout: 120_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ profile: 'fapi2', keys_file: path.join(dir, 'npm-keys.json') });
    expect(fs.statSync(path.join(dir, 'npm-keys.json')).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'npm-keys.json'))).toBe(false);
  }, 150_000);

  it('exits 2 when a fapi2 client names no keys or two sources, or a standard client names keys', async () => {
    const none = await fapi2([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exactly one of --jwks-file .*--jwks-uri .*--generate-keys/);
    const two = await fapi2(['--jwks-uri', 'https://keys.example.org/jwks.json', '--generate-keys', 'x.json'], tempDir());
    expect(two.code).toBe(2);
    const standard = await add([...sandboxArgs, '--generate-keys', 'x.json']);
    expect(standard.code).toBe(2);
    expect(standard.stderr).toMatch(/are for --profile fapi2/);
  });
});

describe('clients rotate-secret', () => {
  it('prints client_id and a new secret; the stored hash changes in the file and the database', async () => {
    const created = oneObject((await add(sandboxArgs)).stdout);
    const clientId = created.client_id as string;
    const oldHash = (await row(clientId))!.client_secret_hash;
    const r = await admin(['clients', 'rotate-secret', '--client-id', clientId, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = oneObject(r.stdout);
    expect(out).toEqual(expect.objectContaining({ client_id: clientId, client_secret: expect.any(String) }));
    expect(out.client_secret).not.toBe(created.client_secret);
    const entry = readFile().clients.find((c) => c.client_id === clientId)!;
    expect(entry.client_secret_hash).not.toBe(oldHash);
    expect(entry.client_secret_hash.startsWith('$argon2id$')).toBe(true);
    expect(await argon2.verify(entry.client_secret_hash, out.client_secret as string)).toBe(true);
    expect(await argon2.verify(entry.client_secret_hash, created.client_secret as string)).toBe(false);
    expect((await row(clientId))!.client_secret_hash).toBe(entry.client_secret_hash);
    expect(fs.readFileSync(clientsFile, 'utf8')).not.toContain(out.client_secret as string);
  });

  it('exits 1 naming the unknown client, and leaves the file unchanged', async () => {
    const before = fs.readFileSync(clientsFile, 'utf8');
    const r = await admin(['clients', 'rotate-secret', '--client-id', 'test_doesnotexist', '--json']);
    oneLineFailure(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no client/);
    expect(r.stderr).toContain('test_doesnotexist');
    expect(fs.readFileSync(clientsFile, 'utf8')).toBe(before);
  });

  it('exits 2 without --client-id', async () => {
    const r = await admin(['clients', 'rotate-secret', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--client-id/);
  });
});

describe('clients list', () => {
  it('prints {clients: [...]} with the registered fields and no secret material', async () => {
    const r = await admin(['clients', 'list', '--json']);
    expect(r.code).toBe(0);
    const out = oneObject(r.stdout);
    expect(Object.keys(out)).toContain('clients');
    const clients = out.clients as Record<string, unknown>[];
    const file = readFile().clients;
    expect(clients.map((c) => c.client_id).sort()).toEqual(file.map((c) => c.client_id).sort());
    for (const client of clients) {
      expect(client).toEqual(
        expect.objectContaining({
          client_id: expect.any(String),
          environment: expect.stringMatching(/^(production|sandbox)$/),
          name: expect.any(String),
          redirect_uris: expect.any(Array),
          scopes: expect.any(Array),
          subject_type: expect.stringMatching(/^(user|organization)$/),
          ip_allow_list: expect.any(Array),
        }),
      );
      expect(client).not.toHaveProperty('client_secret');
      expect(client).not.toHaveProperty('client_secret_hash');
    }
    expect(r.stdout).not.toContain('$argon2id$');
    const org = clients.find((c) => c.subject_type === 'organization')!;
    expect(org).toMatchObject({
      environment: 'production',
      logo_uri: 'https://app.example.org/logo.png',
      ip_allow_list: ['203.0.113.0/24', '2001:db8::/32'],
      post_logout_redirect_uris: [],
    });
    expect(clients.find((c) => (c.post_logout_redirect_uris as string[]).length > 0)).toMatchObject({
      post_logout_redirect_uris: ['https://app.example.org/signed-out', 'https://app.example.org/bye'],
    });
  });

  it('filters by --environment', async () => {
    const file = readFile().clients;
    for (const environment of ['production', 'sandbox']) {
      const r = await admin(['clients', 'list', '--environment', environment, '--json']);
      expect(r.code).toBe(0);
      const clients = oneObject(r.stdout).clients as { client_id: string; environment: string }[];
      expect(clients.length).toBeGreaterThan(0);
      expect(clients.every((c) => c.environment === environment)).toBe(true);
      expect(clients.map((c) => c.client_id).sort()).toEqual(
        file
          .filter((c) => c.environment === environment)
          .map((c) => c.client_id)
          .sort(),
      );
    }
    const bad = await admin(['clients', 'list', '--environment', 'staging', '--json']);
    expect(bad.code).toBe(2);
  });
});

describe('clients remove', () => {
  it('prints {client_id}; the entry and the row are gone', async () => {
    const created = oneObject((await add(sandboxArgs)).stdout);
    const clientId = created.client_id as string;
    expect(await row(clientId)).toBeDefined();
    const r = await admin(['clients', 'remove', '--client-id', clientId, '--json']);
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toEqual(expect.objectContaining({ client_id: clientId }));
    expect(await row(clientId)).toBeUndefined();
    expect(readFile().clients.some((c) => c.client_id === clientId)).toBe(false);
    const listed = oneObject((await admin(['clients', 'list', '--json'])).stdout).clients as { client_id: string }[];
    expect(listed.some((c) => c.client_id === clientId)).toBe(false);
    const again = await admin(['clients', 'remove', '--client-id', clientId, '--json']);
    oneLineFailure(again);
    expect(again.stderr).toMatch(/no client/);
  });
});

describe('clients validate', () => {
  it('prints {valid: true} and exits 0 for a good file', async () => {
    const r = await admin(['clients', 'validate', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toEqual(expect.objectContaining({ valid: true }));
  });

  it('accepts a file written before post_logout_redirect_uris existed (entries without it)', async () => {
    const older = path.join(tempDir(), 'clients.json');
    const entries = readFile().clients.map((entry) => {
      const { post_logout_redirect_uris: _none, ...rest } = entry as FileEntry & { post_logout_redirect_uris?: string[] };
      return rest;
    });
    fs.writeFileSync(older, `${JSON.stringify({ clients: entries }, null, 2)}\n`);
    const r = await admin(['clients', 'validate', '--json'], older);
    expect(r.code).toBe(0);
    expect(oneObject(r.stdout)).toMatchObject({ valid: true, clients: entries.length });
  });

  it('exits non-zero for a hand-broken file and prints one {valid: false, problems} object naming client, field and rule', async () => {
    const good = readFile().clients.find((c) => c.environment === 'production')!;
    const broken = path.join(tempDir(), 'clients.json');
    const withQuery = { ...good, client_id: 'live_withquery01', redirect_uris: ['https://app.example.org/cb?x=1'] };
    const withUnknown = { ...good, client_id: 'live_withfield01', colour: 'blue' };
    const text = `${JSON.stringify({ clients: [withQuery, withUnknown] }, null, 2)}\n`;
    fs.writeFileSync(broken, text);

    const r = await admin(['clients', 'validate', '--json'], broken);
    expect(r.code).not.toBe(0);
    const out = oneObject(r.stdout);
    expect(out.valid).toBe(false);
    const problems = out.problems as string[];
    expect(Array.isArray(problems)).toBe(true);
    const query = problems.find((p) => p.includes('live_withquery01'));
    expect(query).toBeDefined();
    expect(query).toMatch(/redirect_uris/);
    expect(query).toMatch(/query/);
    const unknown = problems.find((p) => p.includes('live_withfield01'));
    expect(unknown).toBeDefined();
    expect(unknown).toMatch(/colour/);
    expect(unknown).toMatch(/not a known field/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // Validation never rewrites the file.
    expect(fs.readFileSync(broken, 'utf8')).toBe(text);

    const plain = await admin(['clients', 'validate'], broken);
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toMatch(/live_withquery01/);
  });

  it('reports a file that is not JSON, and a duplicate client_id', async () => {
    const notJson = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(notJson, '{"clients": [');
    const r = await admin(['clients', 'validate', '--json'], notJson);
    expect(r.code).not.toBe(0);
    expect(oneObject(r.stdout)).toMatchObject({ valid: false, problems: [expect.stringMatching(/JSON/)] });

    const good = readFile().clients[0]!;
    const dup = path.join(tempDir(), 'clients.json');
    fs.writeFileSync(dup, JSON.stringify({ clients: [good, good] }));
    const d = await admin(['clients', 'validate', '--json'], dup);
    expect(d.code).not.toBe(0);
    const problems = oneObject(d.stdout).problems as string[];
    expect(problems.some((p) => p.includes(good.client_id) && /client_id/.test(p) && /unique/.test(p))).toBe(true);
  });

  it('refuses to add to an invalid file and leaves it as it was', async () => {
    const broken = path.join(tempDir(), 'clients.json');
    const text = JSON.stringify({ clients: [{ ...readFile().clients[0]!, redirect_uris: ['https://app.example.org/'] }] });
    fs.writeFileSync(broken, text);
    const r = await admin(
      [
        'clients',
        'add',
        '--environment',
        'production',
        '--name',
        'X',
        '--redirect-uri',
        'https://app.example.org/cb',
        '--scope',
        'read_only',
        '--json',
      ],
      broken,
    );
    oneLineFailure(r);
    expect(fs.readFileSync(broken, 'utf8')).toBe(text);
  });
});
