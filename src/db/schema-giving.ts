import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of DAFpay giving (migration 20261129210000; docs/giving.md). connects and grants are in schema.ts. */

/** Cents in a bigint column: read as pg's text, written as a safe integer. */
type Cents = ColumnType<string, number, number>;

/** The published GrantAddress, as stored. */
export interface GrantAddressJson {
  line1?: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
}

/** The donor's details a workflow session holds (the capture's `donor` may add to them). */
export interface SessionDonorJson {
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  address?: GrantAddressJson;
}

export interface DafsTable {
  id: Generated<string>;
  org_name: string;
  search_name: ColumnType<string, never, never>;
  address: Generated<string>;
  address2: Generated<string>;
  city: Generated<string>;
  state: Generated<string>;
  zip: Generated<string>;
  minimum_grant_amount: ColumnType<string, number | undefined, number>;
  institution_down: Generated<boolean>;
  /** The fund provider on Almoner this DAF is (integrated), or null. */
  fund_provider_id: string | null;
  /** The sandbox's simulated DAF (a simulated sign-in with a known balance). */
  simulated: Generated<boolean>;
  /** Null: listed in both environments. */
  environment: Environment | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type WorkflowFrequency = 'one_time' | 'monthly';

export interface WorkflowSessionsTable {
  id: Generated<string>;
  environment: Environment;
  connect_id: string;
  daf_id: string;
  frequency: WorkflowFrequency;
  /** The most the donor authorized, in cents. */
  amount: Cents;
  donor: Json<SessionDonorJson>;
  note: string | null;
  designation: string | null;
  donor_account_id: string | null;
  donor_balance: ColumnType<string | null, number | null | undefined, number | null>;
  authorized_at: CreatedAt;
  expires_at: Date;
  captured_at: Date | null;
  grant_id: string | null;
  recurring_grant_id: string | null;
  unintegrated_grant_id: string | null;
}

export interface RecurringGrantsTable {
  id: Generated<string>;
  environment: Environment;
  organization_id: string;
  connect_id: string;
  workflow_session_id: string;
  tracking_id: string;
  fund_id: string;
  frequency: Generated<'MONTHLY'>;
  external_recurring_grant_id: string | null;
  amount: Cents;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  note: string | null;
  address: ColumnType<GrantAddressJson | null, string | null, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type UnintegratedGrantStatus = 'Unknown' | 'Completed' | 'Canceled';

export interface UnintegratedGrantsTable {
  id: Generated<string>;
  environment: Environment;
  organization_id: string;
  connect_id: string;
  workflow_session_id: string;
  tracking_id: string;
  fund_id: string;
  amount: Cents;
  status: Generated<UnintegratedGrantStatus>;
  metadata: Json<Record<string, string>>;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  note: string | null;
  address: ColumnType<GrantAddressJson | null, string | null, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** The published GrantStatus values (a grant's history); `completed` is a grant's status, never an entry. */
export const GRANT_HISTORY_STATUSES = ['awaiting_account_approval', 'awaiting_daf_submission', 'initiated', 'canceled'] as const;
export type GrantHistoryStatus = (typeof GRANT_HISTORY_STATUSES)[number];

export interface GrantStatusesTable {
  id: Generated<string>;
  grant_id: string;
  status: GrantHistoryStatus;
  comment: string | null;
  created_at: CreatedAt;
}

export interface GivingDatabase {
  dafs: DafsTable;
  workflow_sessions: WorkflowSessionsTable;
  recurring_grants: RecurringGrantsTable;
  unintegrated_grants: UnintegratedGrantsTable;
  grant_statuses: GrantStatusesTable;
}

export const GIVING_TABLE_COLUMNS = {
  dafs: columns<DafsTable>()([
    'id',
    'org_name',
    'search_name',
    'address',
    'address2',
    'city',
    'state',
    'zip',
    'minimum_grant_amount',
    'institution_down',
    'fund_provider_id',
    'simulated',
    'environment',
    'created_at',
    'updated_at',
  ]),
  workflow_sessions: columns<WorkflowSessionsTable>()([
    'id',
    'environment',
    'connect_id',
    'daf_id',
    'frequency',
    'amount',
    'donor',
    'note',
    'designation',
    'donor_account_id',
    'donor_balance',
    'authorized_at',
    'expires_at',
    'captured_at',
    'grant_id',
    'recurring_grant_id',
    'unintegrated_grant_id',
  ]),
  recurring_grants: columns<RecurringGrantsTable>()([
    'id',
    'environment',
    'organization_id',
    'connect_id',
    'workflow_session_id',
    'tracking_id',
    'fund_id',
    'frequency',
    'external_recurring_grant_id',
    'amount',
    'first_name',
    'last_name',
    'email',
    'phone',
    'note',
    'address',
    'created_at',
    'updated_at',
  ]),
  unintegrated_grants: columns<UnintegratedGrantsTable>()([
    'id',
    'environment',
    'organization_id',
    'connect_id',
    'workflow_session_id',
    'tracking_id',
    'fund_id',
    'amount',
    'status',
    'metadata',
    'first_name',
    'last_name',
    'email',
    'phone',
    'note',
    'address',
    'created_at',
    'updated_at',
  ]),
  grant_statuses: columns<GrantStatusesTable>()(['id', 'grant_id', 'status', 'comment', 'created_at']),
} satisfies { [K in keyof GivingDatabase]: readonly string[] };
