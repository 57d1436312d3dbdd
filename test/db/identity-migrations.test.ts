/**
 * Migrations that rewrite what earlier versions stored about people, applied to a database
 * holding such rows: 20261127000100_invitation_audit_existence (invitation rows no longer say
 * whether the address had an account).
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
import { tempDir } from '../helpers/app.js';

const FIRST = '20261127000100_invitation_audit_existence';
const name = `almoner_t_identity_${crypto.randomBytes(4).toString('hex')}`;
const adminUrl = () => inject('adminUrl');
let db: Db;

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
  for (const file of fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < FIRST)) fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  await migrateToLatest(db, before);
});
afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

describe('identity migrations', () => {
  it('remove existing_user from the invitation rows of the audit log, and nothing else', async () => {
    const audit = (event: string, details: object) => sql`insert into audit_events (event, details) values (${event}, ${JSON.stringify(details)}::jsonb)`.execute(db);
    await audit('invitation.created', { invitation_id: 'a', email: 'known@example.org', role: 'member', existing_user: true, expires_at: '2026-01-01T00:00:00.000Z', via: 'dashboard' });
    await audit('invitation.created', { invitation_id: 'b', email: 'new@example.org', role: 'admin', existing_user: false, expires_at: '2026-01-01T00:00:00.000Z', via: 'admin_cli' });
    await audit('invitation.accepted', { invitation_id: 'a', email: 'known@example.org', role: 'member', new_user: false });

    expect((await migrateToLatest(db)).applied).toContain(FIRST);

    const rows = await db.selectFrom('audit_events').select(['event', 'details']).orderBy('id').execute();
    expect(rows.map((r) => r.details)).toEqual([
      { invitation_id: 'a', email: 'known@example.org', role: 'member', expires_at: '2026-01-01T00:00:00.000Z', via: 'dashboard' },
      { invitation_id: 'b', email: 'new@example.org', role: 'admin', expires_at: '2026-01-01T00:00:00.000Z', via: 'admin_cli' },
      { invitation_id: 'a', email: 'known@example.org', role: 'member', new_user: false },
    ]);
  });
});
