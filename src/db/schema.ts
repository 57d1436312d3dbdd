import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Table types of the migrated schema; test/db/schema.test.ts checks them against the database. */

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export type OrganizationKind = 'nonprofit' | 'fund_provider';
export type Role = 'owner' | 'admin' | 'member' | 'read_only';
export type Environment = 'production' | 'sandbox';

export interface OrganizationsTable {
  id: Generated<string>;
  kind: OrganizationKind;
  ein: string;
  name: string;
  address_line1: string | null;
  address_line2: string | null;
  city: string | null;
  region: string | null;
  postal_code: string | null;
  country: Generated<string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  password_hash: string;
  display_name: string | null;
  disabled_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface MembershipsTable {
  organization_id: string;
  user_id: string;
  role: Role;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface AuditEventsTable {
  id: ColumnType<string, never, never>;
  occurred_at: CreatedAt;
  event: string;
  environment: Environment | null;
  actor_user_id: string | null;
  organization_id: string | null;
  client_id: string | null;
  ip: string | null;
  request_id: string | null;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface DemoSeedStepsTable {
  name: string;
  applied_at: CreatedAt;
}

export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  audit_events: AuditEventsTable;
  demo_seed_steps: DemoSeedStepsTable;
}

/** Column lists of every table, tied to the interfaces above at compile time. */
type Columns<T> = readonly (keyof T & string)[];
type Exhaustive<T, L extends readonly unknown[]> = Exclude<keyof T, L[number]> extends never ? L : never;
const columns = <T>() => <const L extends Columns<T>>(list: Exhaustive<T, L>) => list;

export const TABLE_COLUMNS = {
  organizations: columns<OrganizationsTable>()(['id', 'kind', 'ein', 'name', 'address_line1', 'address_line2', 'city', 'region', 'postal_code', 'country', 'created_at', 'updated_at']),
  users: columns<UsersTable>()(['id', 'email', 'password_hash', 'display_name', 'disabled_at', 'created_at', 'updated_at']),
  memberships: columns<MembershipsTable>()(['organization_id', 'user_id', 'role', 'created_at', 'updated_at']),
  audit_events: columns<AuditEventsTable>()(['id', 'occurred_at', 'event', 'environment', 'actor_user_id', 'organization_id', 'client_id', 'ip', 'request_id', 'details']),
  demo_seed_steps: columns<DemoSeedStepsTable>()(['name', 'applied_at']),
} satisfies { [K in keyof Database]: readonly string[] };

export type Organization = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
export type User = Selectable<UsersTable>;
export type Membership = Selectable<MembershipsTable>;
export type MembershipUpdate = Updateable<MembershipsTable>;
