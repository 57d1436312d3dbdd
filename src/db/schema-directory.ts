import type { ColumnType } from 'kysely';
import { columns, type CreatedAt, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the organizations directory (migration 20261129120100; docs/directory.md). */

/** Where a directory row came from: the IRS EO BMF import, or the dev demo data. */
export type DirectorySource = 'irs_bmf' | 'demo' | 'verification_request';

export interface DirectoryOrganizationsTable {
  /**
   * The published id (`org_…`), drawn once by the database on insert (migration 20261129130200),
   * or the one a verification request named, given by its approval; never changed.
   */
  id: ColumnType<string, string | undefined, never>;
  /** Nine digits, no dash. */
  ein: string;
  name: string;
  /** Generated from name (ASCII letters lower-cased, digits, single spaces): what search compares. */
  search_name: ColumnType<string, never, never>;
  /** search_name's words (generated; migration 20261129200000): the GIN index behind typo-tolerant search. */
  search_words: ColumnType<string[], never, never>;
  sort_name: string | null;
  in_care_of: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  group_exemption_number: string | null;
  subsection_code: string | null;
  affiliation_code: string | null;
  classification_code: string | null;
  /** YYYYMM of the ruling or determination letter. */
  ruling: string | null;
  deductibility_code: string | null;
  foundation_code: string | null;
  organization_code: string | null;
  exempt_status_code: string | null;
  filing_requirement_code: string | null;
  ntee_code: string | null;
  source: DirectorySource;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type SandboxSettlement = 'SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER' | 'SANDBOX_SETTLEMENT_ACH';

/** The sandbox onboarding simulation's record: one per directory organization, its rail fixed. */
export interface DirectoryOnboardingsTable {
  organization_id: string;
  settlement: SandboxSettlement;
  onboarded_by: string | null;
  created_at: CreatedAt;
}

export type VerificationStatus = 'needs_review' | 'verified' | 'failed';

/** A grantmaker's request to verify an organization the directory does not list (migration 20261129130300). */
export interface VerificationRequestsTable {
  id: string;
  environment: Environment;
  grantmaker_id: string;
  ein: string;
  organization_name: string;
  organization_id: string;
  status: ColumnType<VerificationStatus, VerificationStatus | undefined, VerificationStatus>;
  website: string | null;
  contact_email: string | null;
  mailing_line1: string;
  mailing_line2: string | null;
  mailing_city: string;
  mailing_state: string;
  mailing_zip_code: string;
  verified_at: Date | null;
  failed_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A mailing address a grantmaker uploaded for a directory organization (migration 20261129130400). */
export interface NonprofitAddressSuggestionsTable {
  id: string;
  environment: Environment;
  grantmaker_id: string;
  ein: string;
  line1: string;
  line2: string | null;
  city: string;
  state: string;
  zip: string;
  created_at: CreatedAt;
}

/** A contact a grantmaker uploaded for a directory organization (migration 20261129130400). */
export interface NonprofitContactSuggestionsTable {
  id: string;
  environment: Environment;
  grantmaker_id: string;
  ein: string;
  email: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  created_at: CreatedAt;
}

/** The directory's distinct name words, kept by triggers on directory_organizations (migration 20261129200000). */
export interface DirectoryWordsTable {
  word: string;
  /** How many names hold the word. */
  names: number;
}

export interface DirectoryDatabase {
  directory_words: DirectoryWordsTable;
  nonprofit_address_suggestions: NonprofitAddressSuggestionsTable;
  nonprofit_contact_suggestions: NonprofitContactSuggestionsTable;
  directory_organizations: DirectoryOrganizationsTable;
  directory_onboardings: DirectoryOnboardingsTable;
  verification_requests: VerificationRequestsTable;
}

export const DIRECTORY_TABLE_COLUMNS = {
  directory_words: columns<DirectoryWordsTable>()(['word', 'names']),
  directory_organizations: columns<DirectoryOrganizationsTable>()([
    'id',
    'ein',
    'name',
    'search_name',
    'search_words',
    'sort_name',
    'in_care_of',
    'street',
    'city',
    'state',
    'postal_code',
    'group_exemption_number',
    'subsection_code',
    'affiliation_code',
    'classification_code',
    'ruling',
    'deductibility_code',
    'foundation_code',
    'organization_code',
    'exempt_status_code',
    'filing_requirement_code',
    'ntee_code',
    'source',
    'created_at',
    'updated_at',
  ]),
  directory_onboardings: columns<DirectoryOnboardingsTable>()(['organization_id', 'settlement', 'onboarded_by', 'created_at']),
  verification_requests: columns<VerificationRequestsTable>()([
    'id',
    'environment',
    'grantmaker_id',
    'ein',
    'organization_name',
    'organization_id',
    'status',
    'website',
    'contact_email',
    'mailing_line1',
    'mailing_line2',
    'mailing_city',
    'mailing_state',
    'mailing_zip_code',
    'verified_at',
    'failed_at',
    'created_at',
    'updated_at',
  ]),
  nonprofit_address_suggestions: columns<NonprofitAddressSuggestionsTable>()([
    'id',
    'environment',
    'grantmaker_id',
    'ein',
    'line1',
    'line2',
    'city',
    'state',
    'zip',
    'created_at',
  ]),
  nonprofit_contact_suggestions: columns<NonprofitContactSuggestionsTable>()([
    'id',
    'environment',
    'grantmaker_id',
    'ein',
    'email',
    'phone',
    'first_name',
    'last_name',
    'created_at',
  ]),
} satisfies { [K in keyof DirectoryDatabase]: readonly string[] };
