-- DAFpay giving (docs/giving.md): Connects, the DAF directory, the donor flow's workflow
-- sessions, and what a capture makes of them (grants, recurring grants, unintegrated grants).

-- A Connect belongs to the organization that created it (a platform, or a nonprofit for itself)
-- and is for one directory organization: the nonprofit its grants go to. One per creator and
-- nonprofit in an environment. Connects from before (the demo's) have no recipient.
alter table connects
  add column recipient_organization_id text references directory_organizations (id) on delete restrict,
  add column contact jsonb,
  add column metadata jsonb not null default '{}',
  add column active boolean not null default true,
  add column created_by text,
  add column updated_at timestamptz not null default now();
create unique index connects_one_per_recipient on connects (organization_id, environment, recipient_organization_id)
  where recipient_organization_id is not null;

-- The donor-advised-fund sponsors the donor flow offers (GET /v1/dafs). A fund provider on Almoner
-- is an integrated DAF (supported); the maintained list below is of sponsors that are not (yet).
-- The sandbox's simulated DAF exists in the sandbox only (environment = 'sandbox'); every other
-- row is in both environments (environment null).
create table dafs (
  id                   uuid primary key default gen_random_uuid(),
  org_name             text not null check (btrim(org_name) <> ''),
  search_name          text generated always as (lower(org_name)) stored,
  address              text not null default '',
  address2             text not null default '',
  city                 text not null default '',
  state                text not null default '',
  zip                  text not null default '',
  -- Cents, whole dollars: a grant below it is refused (400).
  minimum_grant_amount bigint not null default 5000 check (minimum_grant_amount >= 100 and minimum_grant_amount % 100 = 0),
  institution_down     boolean not null default false,
  fund_provider_id     uuid unique references organizations (id) on delete cascade,
  simulated            boolean not null default false,
  environment          text check (environment in ('production', 'sandbox')),
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  constraint dafs_simulated_sandbox check (not simulated or (environment = 'sandbox' and fund_provider_id is null))
);
create unique index dafs_listed_name on dafs (search_name) where fund_provider_id is null;
create index dafs_name_order on dafs (org_name, id);

-- Every fund provider is an integrated DAF, kept with its organization by a trigger (so the
-- CLI, the demo and tests alike get it).
create function dafs_of_fund_providers() returns trigger language plpgsql as $$
begin
  if new.kind = 'fund_provider' then
    insert into dafs (org_name, fund_provider_id) values (new.name, new.id)
    on conflict (fund_provider_id) do update set org_name = excluded.org_name, updated_at = now();
  end if;
  return new;
end $$;
create trigger organizations_dafs after insert or update of name, kind on organizations
  for each row execute function dafs_of_fund_providers();
insert into dafs (org_name, fund_provider_id) select name, id from organizations where kind = 'fund_provider';

insert into dafs (org_name, environment, simulated, minimum_grant_amount) values
  ('Sandbox DAF (simulated sign-in)', 'sandbox', true, 1000);

-- The maintained list of DAF sponsors (real names; Almoner's minimum per sponsor). A sponsor that
-- joins Almoner as a fund provider is listed under its organization instead.
insert into dafs (org_name, city, state, minimum_grant_amount) values
  ('Fidelity Charitable', 'Boston', 'MA', 5000),
  ('DAFgiving360 (Schwab Charitable)', 'San Francisco', 'CA', 5000),
  ('Vanguard Charitable', 'Malvern', 'PA', 50000),
  ('National Philanthropic Trust', 'Jenkintown', 'PA', 25000),
  ('American Endowment Foundation', 'Hudson', 'OH', 10000),
  ('National Christian Foundation', 'Alpharetta', 'GA', 5000),
  ('Jewish Communal Fund', 'New York', 'NY', 10000),
  ('The New York Community Trust', 'New York', 'NY', 10000),
  ('The Chicago Community Trust', 'Chicago', 'IL', 10000),
  ('Greater Kansas City Community Foundation', 'Kansas City', 'MO', 10000),
  ('The Boston Foundation', 'Boston', 'MA', 10000),
  ('The Cleveland Foundation', 'Cleveland', 'OH', 10000),
  ('The Columbus Foundation', 'Columbus', 'OH', 10000),
  ('The Minneapolis Foundation', 'Minneapolis', 'MN', 10000),
  ('The San Francisco Foundation', 'San Francisco', 'CA', 10000),
  ('Silicon Valley Community Foundation', 'San Mateo', 'CA', 10000),
  ('California Community Foundation', 'Los Angeles', 'CA', 10000),
  ('Marin Community Foundation', 'Novato', 'CA', 10000),
  ('Oregon Community Foundation', 'Portland', 'OR', 10000),
  ('Seattle Foundation', 'Seattle', 'WA', 10000),
  ('The Denver Foundation', 'Denver', 'CO', 10000),
  ('Arizona Community Foundation', 'Phoenix', 'AZ', 10000),
  ('Communities Foundation of Texas', 'Dallas', 'TX', 10000),
  ('Greater Houston Community Foundation', 'Houston', 'TX', 10000),
  ('Renaissance Charitable', 'Indianapolis', 'IN', 10000),
  ('Raymond James Charitable', 'St. Petersburg', 'FL', 10000),
  ('T. Rowe Price Charitable', 'Baltimore', 'MD', 10000),
  ('Goldman Sachs Philanthropy Fund', '', '', 25000),
  ('Morgan Stanley Global Impact Funding Trust', '', '', 10000),
  ('BNY Mellon Charitable Gift Fund', '', '', 10000),
  ('Bank of America Charitable Gift Fund', '', '', 10000),
  ('J.P. Morgan Charitable Giving Fund', '', '', 10000),
  ('Edward Jones Charitable Gift Fund', '', '', 10000),
  ('Ayco Charitable Foundation', '', '', 10000),
  ('U.S. Charitable Gift Trust', '', '', 5000),
  ('Daffy Charitable Fund', '', '', 1000),
  ('Charityvest', '', '', 2000),
  ('Tides Foundation', 'San Francisco', 'CA', 10000);

-- A donor's authorization in the flow: what they chose (DAF, amount, one-time or monthly) and who
-- they are. The platform captures it once (POST /v1/grants or /v1/recurring_grants) within 15
-- minutes; an unintegrated DAF's session ends as an unintegrated grant in the flow itself.
create table workflow_sessions (
  id                    uuid primary key default gen_random_uuid(),
  environment           text not null check (environment in ('production', 'sandbox')),
  connect_id            text not null references connects (id) on delete cascade,
  daf_id                uuid not null references dafs (id) on delete cascade,
  frequency             text not null check (frequency in ('one_time', 'monthly')),
  -- The most the donor authorized, in cents (whole dollars).
  amount                bigint not null check (amount > 0 and amount % 100 = 0),
  -- firstName, lastName, email, phone, address (GrantAddress), as the donor gave them.
  donor                 jsonb not null default '{}',
  note                  text,
  designation           text,
  -- An integrated DAF's donor account at its fund provider (found or opened by e-mail).
  donor_account_id      text references donor_accounts (id) on delete cascade,
  -- The donor's balance when the DAF told it (the simulated DAF does), in cents.
  donor_balance         bigint check (donor_balance >= 0),
  authorized_at         timestamptz not null default now(),
  expires_at            timestamptz not null,
  captured_at           timestamptz,
  grant_id              uuid,
  recurring_grant_id    uuid,
  unintegrated_grant_id uuid,
  constraint workflow_sessions_captured_once check (
    num_nonnulls(grant_id, recurring_grant_id, unintegrated_grant_id) <= 1
    and (captured_at is null) = (num_nonnulls(grant_id, recurring_grant_id, unintegrated_grant_id) = 0))
);
create index workflow_sessions_connect_idx on workflow_sessions (connect_id, authorized_at);

create table recurring_grants (
  id                           uuid primary key default gen_random_uuid(),
  environment                  text not null check (environment in ('production', 'sandbox')),
  organization_id              uuid not null references organizations (id) on delete cascade,
  connect_id                   text not null references connects (id) on delete cascade,
  workflow_session_id          uuid not null unique references workflow_sessions (id) on delete cascade,
  tracking_id                  text not null,
  fund_id                      text not null,
  frequency                    text not null default 'MONTHLY' check (frequency in ('MONTHLY')),
  external_recurring_grant_id  text,
  amount                       bigint not null check (amount > 0),
  first_name                   text,
  last_name                    text,
  email                        text,
  phone                        text,
  note                         text,
  address                      jsonb,
  created_at                   timestamptz not null default now(),
  updated_at                   timestamptz not null default now()
);
create index recurring_grants_page_idx on recurring_grants (organization_id, environment, created_at desc, id desc);
create index recurring_grants_connect_idx on recurring_grants (connect_id, created_at desc, id desc);

create table unintegrated_grants (
  id                  uuid primary key default gen_random_uuid(),
  environment         text not null check (environment in ('production', 'sandbox')),
  organization_id     uuid not null references organizations (id) on delete cascade,
  connect_id          text not null references connects (id) on delete cascade,
  workflow_session_id uuid not null unique references workflow_sessions (id) on delete cascade,
  tracking_id         text not null,
  fund_id             text not null,
  amount              bigint not null check (amount > 0),
  status              text not null default 'Unknown' check (status in ('Unknown', 'Completed', 'Canceled')),
  metadata            jsonb not null default '{}',
  first_name          text,
  last_name           text,
  email               text,
  phone               text,
  note                text,
  address             jsonb,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
create index unintegrated_grants_page_idx on unintegrated_grants (organization_id, environment, created_at desc, id desc);
create index unintegrated_grants_connect_idx on unintegrated_grants (connect_id, created_at desc, id desc);

-- What a captured grant is tied to: its DAF, the grant request at an integrated DAF's fund
-- provider (whose submit or reject moves the grant), its recurring grant, the platform's fee.
alter table grants
  -- A fund provider's removal leaves the nonprofit's grants, without their links to it.
  add column daf_id uuid references dafs (id) on delete set null,
  add column donor_account_id text references donor_accounts (id) on delete set null,
  add column grant_request_id text unique references grant_requests (id) on delete set null,
  add column recurring_grant_id uuid references recurring_grants (id) on delete cascade,
  add column application_fee bigint not null default 0 check (application_fee >= 0),
  add column metadata jsonb not null default '{}',
  add column address jsonb,
  add column designation text,
  add column completed_at timestamptz,
  add column canceled_at timestamptz;
create index grants_grant_request_idx on grants (grant_request_id) where grant_request_id is not null;
create index grants_awaiting_account_idx on grants (donor_account_id) where status = 'awaiting_account_approval';

-- A grant's status history (the published GrantStatus list), oldest first.
create table grant_statuses (
  id         uuid primary key default gen_random_uuid(),
  grant_id   uuid not null references grants (id) on delete cascade,
  status     text not null check (status in ('awaiting_account_approval', 'awaiting_daf_submission', 'initiated', 'canceled')),
  comment    text,
  created_at timestamptz not null default now()
);
create index grant_statuses_grant_idx on grant_statuses (grant_id, created_at, id);
