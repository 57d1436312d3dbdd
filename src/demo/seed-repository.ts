import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { ConnectsTable, DonationsTable, GrantsTable, OrganizationKind, Role } from '../db/schema.js';
import type { DepositAccountsTable, DepositStatementsTable, DepositTransactionsTable } from '../db/schema-fdx.js';

/** The demo seed's reads and writes: which steps ran, and the demo rows themselves (inserted in batches by the callers). */

export function findSeedStep(db: Executor, name: string) {
  return db.selectFrom('demo_seed_steps').select('name').where('name', '=', name).executeTakeFirst();
}

/** Records a step as applied; undefined when another start already claimed it (its row lock makes a racing start wait). */
export function claimSeedStep(trx: Executor, name: string) {
  return trx
    .insertInto('demo_seed_steps')
    .values({ name })
    .onConflict((oc) => oc.doNothing())
    .returning('name')
    .executeTakeFirst();
}

export function findOrganizationIdByEin(db: Executor, ein: string) {
  return db.selectFrom('organizations').select('id').where('ein', '=', ein).executeTakeFirst();
}

export function insertDemoOrganization(
  db: Executor,
  values: { ein: string; name: string; kind: OrganizationKind; address_line1: string; city: string; region: string; postal_code: string },
) {
  return db.insertInto('organizations').values(values).returning('id').executeTakeFirstOrThrow();
}

export function findUserIdByEmail(db: Executor, email: string) {
  return db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
}

export function insertDemoUser(db: Executor, values: { email: string; password_hash: string; display_name: string }) {
  return db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
}

/** Adds the membership unless the user already has one in the organization. */
export async function ensureMembership(db: Executor, values: { organization_id: string; user_id: string; role: Role }): Promise<void> {
  await db
    .insertInto('memberships')
    .values(values)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function insertConnects(db: Executor, rows: Insertable<ConnectsTable>[]): Promise<void> {
  await db.insertInto('connects').values(rows).execute();
}

export async function insertGrants(db: Executor, rows: Insertable<GrantsTable>[]): Promise<void> {
  await db.insertInto('grants').values(rows).execute();
}

export async function insertDonations(db: Executor, rows: Insertable<DonationsTable>[]): Promise<void> {
  await db.insertInto('donations').values(rows).execute();
}

export async function insertDepositAccount(db: Executor, values: Insertable<DepositAccountsTable>): Promise<void> {
  await db.insertInto('deposit_accounts').values(values).execute();
}

export async function insertDepositStatements(db: Executor, rows: Insertable<DepositStatementsTable>[]): Promise<void> {
  await db.insertInto('deposit_statements').values(rows).execute();
}

export async function insertDepositTransactions(db: Executor, rows: Insertable<DepositTransactionsTable>[]): Promise<void> {
  await db.insertInto('deposit_transactions').values(rows).execute();
}
