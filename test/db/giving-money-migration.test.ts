/**
 * The upgrade to DAFpay giving's money (migration 20261129210100_giving_money), applied to a
 * database holding organizations added before it: each nonprofit and platform gets a processing
 * financial account per environment over a new pair of ledger accounts, the other kinds nothing;
 * the environment-wide accounts may be `dafpay_network` (docs/giving.md, "Money").
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
import { verifyLedger } from '../../src/ledger/verify.js';
import { tempDir } from '../helpers/app.js';

const MIGRATION = '20261129210100_giving_money';
const name = `almoner_t_upgrade_${crypto.randomBytes(4).toString('hex')}`;
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
  const before = tempDir();
  for (const file of fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < MIGRATION))
    fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  await migrateToLatest(db, before);
});
afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

describe(`migration ${MIGRATION}`, () => {
  it('opens a processing account per environment for the nonprofits and platforms added before, and nothing for the others', async () => {
    const orgs = await sql<{ id: string; kind: string }>`
      insert into organizations (ein, name, kind) values
        ('771000001', 'Old Nonprofit', 'nonprofit'), ('772000001', 'Old Platform', 'platform'), ('773000001', 'Old Fund', 'fund_provider')
      returning id, kind`.execute(db);
    await migrateToLatest(db, MIGRATIONS_DIR);
    for (const org of orgs.rows) {
      const accounts = await db
        .selectFrom('financial_accounts as f')
        .innerJoin('ledger_accounts as a', 'a.id', 'f.available_ledger_account_id')
        .innerJoin('ledger_accounts as h', 'h.id', 'f.held_ledger_account_id')
        .select([
          'f.id',
          'f.environment',
          'f.account_type',
          'f.bank_provider',
          'a.purpose as available',
          'h.purpose as held',
          'a.organization_id',
        ])
        .where('f.organization_id', '=', org.id)
        .orderBy('f.environment')
        .execute();
      if (org.kind === 'fund_provider') {
        expect(accounts).toEqual([]);
        continue;
      }
      expect(accounts).toEqual([
        expect.objectContaining({
          environment: 'production',
          account_type: 'processing',
          bank_provider: 'manual',
          available: 'available',
          held: 'held',
          organization_id: org.id,
        }),
        expect.objectContaining({
          environment: 'sandbox',
          account_type: 'processing',
          bank_provider: 'mock_alpha',
          available: 'available',
          held: 'held',
          organization_id: org.id,
        }),
      ]);
      for (const account of accounts) expect(account.id).toMatch(/^account_[0-9a-z]{26}$/);
    }
    await db
      .insertInto('ledger_accounts')
      .values({ id: 'lacct_dafpaynetworktest000000000', environment: 'sandbox', purpose: 'clearing', may_go_negative: false })
      .execute();
    await db
      .insertInto('platform_ledger_accounts')
      .values({ environment: 'sandbox', purpose: 'dafpay_network', ledger_account_id: 'lacct_dafpaynetworktest000000000' })
      .execute();
    expect(await verifyLedger(db)).toMatchObject({ ok: true });
  });
});
