/**
 * The upgrade to versioned server keys (migration 20261124000100_server_keys), applied to a
 * database holding what earlier versions wrote: its secrets carry over unchanged, clear typed
 * input leaves the audit log, plain-hash throttle rows go, and a DAF code issued before the
 * upgrade still verifies through the real gateway.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/config/paths.js';
import { createDatabase, type Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { ServerKeys } from '../../src/keys/server-keys.js';
import { tempDir, testBox } from '../helpers/app.js';
import { apiRequest } from '../helpers/gateway.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';

const MIGRATION = '20261124000100_server_keys';
const name = `almoner_t_upgrade_${crypto.randomBytes(4).toString('hex')}`;
const adminUrl = () => inject('adminUrl');
let db: Db;
let server: OAuthTestServer | undefined;

async function admin(statement: string) {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  await admin(`create database ${name} template template0`);
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  db = createDatabase({ url: url.toString(), poolMax: 5 });
  // The schema as it was just before the migration.
  const before = tempDir();
  for (const file of fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < MIGRATION))
    fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  await migrateToLatest(db, before);
});
afterAll(async () => {
  await server?.close();
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

describe(`migration ${MIGRATION}`, () => {
  it('keeps every server secret, removes typed input from the audit log and plain hashes from the throttle, and old pending codes still verify', async () => {
    const secrets = {
      'cookie_key:production': 'prod-cookie-key',
      'cookie_key:sandbox': 'sandbox-cookie-key',
      csrf_key: crypto.randomBytes(32).toString('base64url'),
      client_secret_cache_key: crypto.randomBytes(32).toString('base64url'),
    };
    for (const [key, value] of Object.entries(secrets)) {
      // One of them from before encryption at rest, stored in clear.
      const stored = key === 'cookie_key:sandbox' ? value : testBox.seal(value);
      await sql`insert into server_secrets (name, value) values (${key}, ${stored})`.execute(db);
    }
    await sql`insert into users (email, password_hash) values ('known@example.org', 'x')`.execute(db);
    const audit = (event: string, details: object) =>
      sql`insert into audit_events (event, details) values (${event}, ${JSON.stringify(details)}::jsonb)`.execute(db);
    await audit('login.failed', { email: 'my password 123', reason: 'unknown_user' });
    await audit('login.locked_out', { email: 'stranger@example.org', scope: 'account', seconds: 60 });
    await audit('login.failed', { email: 'known@example.org', reason: 'wrong_password' });
    await sql`insert into login_throttle (key, points, expire) values (${`account_fail:${sha256('stranger@example.org')}`}, 3, ${Date.now() + 600_000})`.execute(
      db,
    );
    const provider = await sql<{
      id: string;
    }>`insert into organizations (ein, name, kind) values ('981230001', 'Upgrade Fund', 'fund_provider') returning id`.execute(db);
    const providerId = provider.rows[0]!.id;
    const token = async (code: string, status: string) => {
      const account = prefixedId('donor_account');
      await sql`insert into donor_accounts (id, environment, fund_provider_id, email) values (${account}, 'sandbox', ${providerId}, ${`${account}@example.org`})`.execute(
        db,
      );
      const id = prefixedId('auth_token');
      await sql`insert into donor_authorization_tokens (id, environment, fund_provider_id, donor_account_id, code_hash, status, expires_at)
                values (${id}, 'sandbox', ${providerId}, ${account}, ${sha256(code)}, ${status}, now() + interval '10 days')`.execute(db);
      return { id, account };
    };
    const pending = await token('PENDINGCODE2', 'pending');
    const used = await token('USEDCODE2345', 'verified');

    expect((await migrateToLatest(db)).applied).toContain(MIGRATION);

    // The secrets are the first versions of their keys, unchanged (cookies and forms signed before still verify).
    const keys = await ServerKeys.load(db, testBox);
    for (const [key, value] of Object.entries(secrets)) expect(keys.signing(key as keyof typeof secrets).secret).toBe(value);
    const stored = await db.selectFrom('server_keys').select(['name', 'value']).execute();
    expect(stored.map((r) => r.name).sort()).toEqual([
      'client_secret_cache_key',
      'cookie_key:production',
      'cookie_key:sandbox',
      'csrf_key',
      'hashing_key',
    ]);
    for (const row of stored) expect(row.value.startsWith('enc:v1:')).toBe(true);
    const tables = await sql<{
      n: number;
    }>`select count(*)::int as n from information_schema.tables where table_name = 'server_secrets'`.execute(db);
    expect(tables.rows[0]!.n).toBe(0);

    // Typed input that names no account is gone from the audit log; an account's own address stays.
    const rows = await db.selectFrom('audit_events').select(['event', 'details']).orderBy('id').execute();
    expect(rows.map((r) => r.details)).toEqual([
      { reason: 'unknown_user', email_removed_at_upgrade: true },
      { scope: 'account', seconds: 60, email_removed_at_upgrade: true },
      { email: 'known@example.org', reason: 'wrong_password' },
    ]);
    expect(await db.selectFrom('login_throttle').selectAll().execute()).toEqual([]);

    // A used code's plain hash is blanked; a pending one keeps it and verifies through the gateway.
    const hashes = Object.fromEntries(
      (await db.selectFrom('donor_authorization_tokens').select(['id', 'code_hash']).execute()).map((r) => [r.id, r.code_hash]),
    );
    expect(hashes[used.id]).toBe(`retired:${used.id}`);
    expect(hashes[pending.id]).toBe(sha256('PENDINGCODE2'));
    server = await startOAuthServer(db);
    const key = (await createApiKey(db, { org: '98-1230001', environment: 'sandbox' })).key;
    const verified = await apiRequest(server, 'sandbox', 'POST', '/v1/authorization_tokens/verify', {
      bearer: key,
      json: { code: 'pend-ingc-ode2' },
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: pending.account, status: 'approved' });
    expect(
      (await apiRequest(server, 'sandbox', 'POST', '/v1/authorization_tokens/verify', { bearer: key, json: { code: 'USEDCODE2345' } }))
        .status,
    ).toBe(404);
  });
});
