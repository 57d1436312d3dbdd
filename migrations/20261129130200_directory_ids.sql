-- Published ids of the directory's organizations (docs/directory.md, "Organization ids"): the API
-- names an organization `org_…`, not by EIN. The id is drawn once, when the row is first inserted
-- (the import's upsert never writes it), so re-importing a file never changes an id.
alter table directory_organizations
  add column id text not null unique default ('org_' || replace(gen_random_uuid()::text, '-', ''))
  check (id ~ '^org_[0-9a-f]{32}$');

-- The sandbox onboarding simulation (docs/directory.md, "Sandbox onboarding"): the rail a sandbox
-- organization's disbursements settle on, fixed by the first call (the primary key holds it).
create table directory_onboardings (
  organization_id text primary key references directory_organizations (id),
  settlement text not null check (settlement in ('SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER', 'SANDBOX_SETTLEMENT_ACH')),
  -- Which grantmaker first onboarded it (kept, emptied, when that organization is removed).
  onboarded_by uuid references organizations (id) on delete set null,
  created_at timestamptz not null default now()
);
