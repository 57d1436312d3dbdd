-- Foundation: organizations, users, memberships and the audit trail.
-- Organizations, users and memberships are shared by both environments (PRODUCT.md section 10).

create table organizations (
  id           uuid primary key default gen_random_uuid(),
  kind         text not null check (kind in ('nonprofit', 'fund_provider')),
  -- Employer Identification Number, stored as its nine digits; shown dashed (12-3456789).
  ein          text not null check (ein ~ '^[0-9]{9}$'),
  name         text not null check (length(name) between 1 and 200),
  address_line1 text,
  address_line2 text,
  city         text,
  region       text,
  postal_code  text,
  country      text not null default 'US' check (country ~ '^[A-Z]{2}$'),
  created_at   timestamptz not null default now(),
  updated_at   timestamptz not null default now(),
  constraint organizations_ein_key unique (ein)
);

create table users (
  id            uuid primary key default gen_random_uuid(),
  -- Stored trimmed and lower-cased, so uniqueness is case-insensitive.
  email         text not null check (email = lower(btrim(email)) and email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 254),
  password_hash text not null,
  display_name  text,
  disabled_at   timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  constraint users_email_key unique (email)
);

create table memberships (
  organization_id uuid not null references organizations (id) on delete cascade,
  user_id         uuid not null references users (id) on delete cascade,
  role            text not null check (role in ('owner', 'admin', 'member', 'read_only')),
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  constraint memberships_pkey primary key (organization_id, user_id)
);
create index memberships_user_idx on memberships (user_id);

-- Append-only record of security-relevant events. No foreign keys: the trail outlives
-- the users, organizations and clients it mentions.
create table audit_events (
  id              bigint generated always as identity primary key,
  occurred_at     timestamptz not null default now(),
  event           text not null,
  environment     text check (environment in ('production', 'sandbox')),
  actor_user_id   uuid,
  organization_id uuid,
  client_id       text,
  ip              inet,
  request_id      text,
  details         jsonb not null default '{}'::jsonb
);
create index audit_events_occurred_idx on audit_events (occurred_at);
create index audit_events_org_idx on audit_events (organization_id, occurred_at) where organization_id is not null;

-- Named one-off steps of the dev profile's demo data, so each is applied once per database
-- and later features can add steps that reach existing dev databases too.
create table demo_seed_steps (
  name       text primary key,
  applied_at timestamptz not null default now()
);
