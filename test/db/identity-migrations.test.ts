/**
 * Migrations that rewrite what earlier versions stored about people, applied to a database
 * holding such rows: 20261128000100_invitation_audit_existence (invitation rows no longer say
 * whether the address had an account) and 20261128000200_email_nfc (addresses in NFC, the form
 * every lookup now uses).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/config/paths.js';
import { createDatabase, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { findUserByEmail } from '../../src/accounts/repository.js';
import { normaliseEmail } from '../../src/accounts/service.js';
import { tempDir } from '../helpers/app.js';

const FIRST = '20261128000100_invitation_audit_existence';
const name = `almoner_t_identity_${crypto.randomBytes(4).toString('hex')}`;
const adminUrl = () => inject('adminUrl');
let db: Db;
let applied: string[];
const audit = (event: string, details: object) =>
  sql`insert into audit_events (event, details) values (${event}, ${JSON.stringify(details)}::jsonb)`.execute(db);
const user = async (email: string) =>
  (await sql<{ id: string }>`insert into users (email, password_hash) values (${email}, 'x') returning id`.execute(db)).rows[0]!.id;
// René and José, typed with e and a combining acute accent (NFD), and José also composed (NFC).
const RENE_NFD = 'rene\u0301@example.org';
const JOSE_NFD = 'jose\u0301@example.org';
const JOSE_NFC = 'jos\u00e9@example.org';
const ids: Record<string, string> = {};

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
  // The schema as it was just before these migrations.
  const before = tempDir();
  for (const file of fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < FIRST))
    fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  await migrateToLatest(db, before);

  // What earlier versions stored.
  await audit('invitation.created', {
    invitation_id: 'a',
    email: 'known@example.org',
    role: 'member',
    existing_user: true,
    expires_at: '2026-01-01T00:00:00.000Z',
    via: 'dashboard',
  });
  await audit('invitation.created', {
    invitation_id: 'b',
    email: 'new@example.org',
    role: 'admin',
    existing_user: false,
    expires_at: '2026-01-01T00:00:00.000Z',
    via: 'admin_cli',
  });
  await audit('invitation.accepted', { invitation_id: 'a', email: 'known@example.org', role: 'member', new_user: false });
  ids.rene = await user(RENE_NFD);
  ids.joseComposed = await user(JOSE_NFC);
  ids.joseDecomposed = await user(JOSE_NFD);
  const org = (
    await sql<{
      id: string;
    }>`insert into organizations (ein, name, kind) values ('981230077', 'NFC Fund', 'nonprofit') returning id`.execute(db)
  ).rows[0]!.id;
  const invite = async (email: string, accepted: boolean) =>
    (
      await sql<{ id: string }>`insert into invitations (organization_id, email, role, token_hash, environment, expires_at, accepted_at)
      values (${org}, ${email}, 'member', ${crypto.randomBytes(32).toString('hex')}, 'production', now() + interval '1 day', ${accepted ? new Date() : null}) returning id`.execute(
        db,
      )
    ).rows[0]!.id;
  ids.openInvitation = await invite('ine\u0300s@example.org', false);
  ids.acceptedInvitation = await invite(RENE_NFD, true);

  applied = (await migrateToLatest(db)).applied;
});
afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

describe('identity migrations', () => {
  it('remove existing_user from the invitation rows of the audit log, and nothing else', async () => {
    expect(applied).toContain(FIRST);
    const rows = await db.selectFrom('audit_events').select(['event', 'details']).orderBy('id').execute();
    expect(rows.map((r) => r.details)).toEqual([
      { invitation_id: 'a', email: 'known@example.org', role: 'member', expires_at: '2026-01-01T00:00:00.000Z', via: 'dashboard' },
      { invitation_id: 'b', email: 'new@example.org', role: 'admin', expires_at: '2026-01-01T00:00:00.000Z', via: 'admin_cli' },
      { invitation_id: 'a', email: 'known@example.org', role: 'member', new_user: false },
    ]);
  });

  it('store addresses in NFC, so the normalised lookup finds accounts made before; one whose NFC form is taken stays as it was', async () => {
    expect(applied).toContain('20261128000200_email_nfc');
    const emails = Object.fromEntries((await db.selectFrom('users').select(['id', 'email']).execute()).map((r) => [r.id, r.email]));
    expect(emails[ids.rene!]).toBe('ren\u00e9@example.org');
    expect(emails[ids.joseComposed!]).toBe(JOSE_NFC);
    expect(emails[ids.joseDecomposed!]).toBe(JOSE_NFD);
    // Typed either way, the address finds René's account.
    for (const typed of [RENE_NFD, ' REN\u00c9@Example.org '])
      expect((await findUserByEmail(db, normaliseEmail(typed)))?.id, typed).toBe(ids.rene);
    const invitations = Object.fromEntries(
      (await db.selectFrom('invitations').select(['id', 'email']).execute()).map((r) => [r.id, r.email]),
    );
    expect(invitations[ids.openInvitation!]).toBe('in\u00e8s@example.org');
    expect(invitations[ids.acceptedInvitation!]).toBe('ren\u00e9@example.org');
  });
});
