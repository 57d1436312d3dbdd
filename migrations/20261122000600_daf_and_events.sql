-- Donor-advised-fund APIs (fund providers), events with their outbox, webhook deliveries
-- and the dev mail sink. Everything belongs to one environment.

create table donor_accounts (
  id               text primary key,
  environment      text not null check (environment in ('production', 'sandbox')),
  fund_provider_id uuid not null references organizations (id) on delete cascade,
  status           text not null default 'pending' check (status in ('pending', 'approved', 'rejected')),
  email            text not null check (email = lower(email)),
  first_name       text,
  last_name        text,
  phone            text,
  external_id      text,
  metadata         jsonb not null default '{}'::jsonb,
  disabled         boolean not null default false,
  approved_at      timestamptz,
  approved_by      text,
  rejected_at      timestamptz,
  rejected_by      text,
  rejection_reason text,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  constraint donor_accounts_email_key unique (environment, fund_provider_id, email)
);
create index donor_accounts_page_idx on donor_accounts (fund_provider_id, environment, created_at desc, id desc);

create table donor_authorization_tokens (
  id               text primary key,
  environment      text not null check (environment in ('production', 'sandbox')),
  fund_provider_id uuid not null references organizations (id) on delete cascade,
  donor_account_id text not null references donor_accounts (id) on delete cascade,
  -- SHA-256 of the normalised code; the code itself is returned once and never stored.
  code_hash        text not null,
  status           text not null default 'pending' check (status in ('pending', 'verified', 'revoked')),
  metadata         jsonb not null default '{}'::jsonb,
  created_at       timestamptz not null default now(),
  expires_at       timestamptz not null,
  verified_at      timestamptz,
  revoked_at       timestamptz,
  constraint donor_authorization_tokens_code_key unique (environment, code_hash)
);
create index donor_authorization_tokens_account_idx on donor_authorization_tokens (donor_account_id, created_at desc, id desc);

-- Failed verify attempts, for the per-provider rate limit.
create table donor_token_verify_failures (
  fund_provider_id uuid not null,
  environment      text not null,
  failed_at        timestamptz not null default now()
);
create index donor_token_verify_failures_idx on donor_token_verify_failures (fund_provider_id, environment, failed_at);

create table giving_pools (
  id               uuid primary key default gen_random_uuid(),
  environment      text not null check (environment in ('production', 'sandbox')),
  fund_provider_id uuid not null references organizations (id) on delete cascade,
  donor_account_id text not null references donor_accounts (id) on delete cascade,
  name             text not null,
  metadata         jsonb not null default '{}'::jsonb,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
create index giving_pools_page_idx on giving_pools (fund_provider_id, environment, created_at desc, id desc);

create table grant_requests (
  id                text primary key,
  environment       text not null check (environment in ('production', 'sandbox')),
  fund_provider_id  uuid not null references organizations (id) on delete cascade,
  donor_account_id  text not null references donor_accounts (id) on delete cascade,
  giving_pool_id    uuid references giving_pools (id) on delete set null,
  status            text not null check (status in ('awaiting_account_decision', 'pending', 'submitted', 'rejected')),
  ein               text not null,
  nonprofit_name    text,
  amount_cents      bigint not null check (amount_cents > 0),
  frequency         text not null check (frequency in ('one_time', 'monthly', 'quarterly', 'annual')),
  form_url          text not null,
  purpose           text,
  note              text,
  donor_contact     jsonb,
  rejection_reason  text,
  external_grant_id text,
  comment           text,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now()
);
create index grant_requests_page_idx on grant_requests (fund_provider_id, environment, created_at desc, id desc);
create index grant_requests_account_idx on grant_requests (donor_account_id);

-- The outbox: written in the same transaction as the change it records.
create table events (
  id                     text primary key,
  environment            text not null check (environment in ('production', 'sandbox')),
  organization_id        uuid not null references organizations (id) on delete cascade,
  category               text not null,
  associated_object_id   text not null,
  associated_object_type text not null,
  created_at             timestamptz not null default now()
);
create index events_page_idx on events (organization_id, environment, created_at desc, id desc);

create table event_subscriptions (
  id              text primary key,
  environment     text not null check (environment in ('production', 'sandbox')),
  organization_id uuid not null references organizations (id) on delete cascade,
  url             text not null,
  category        text not null,
  status          text not null default 'active' check (status in ('active', 'disabled', 'deleted', 'requires_attention')),
  -- Standard Webhooks secret (whsec_…). It must be readable to sign, so it is not hashed.
  signing_secret  text not null,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  last_success_at timestamptz,
  failing_since   timestamptz
);
create index event_subscriptions_match_idx on event_subscriptions (organization_id, environment, category) where status = 'active';

create table webhook_deliveries (
  id              text primary key,
  environment     text not null,
  subscription_id text not null references event_subscriptions (id) on delete cascade,
  event_id        text not null references events (id) on delete cascade,
  status          text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts        integer not null default 0,
  next_attempt_at timestamptz not null,
  locked_until    timestamptz,
  last_attempt_at timestamptz,
  last_status     integer,
  last_error      text,
  created_at      timestamptz not null default now(),
  constraint webhook_deliveries_once unique (subscription_id, event_id)
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';

-- Dev mail sink: what would have been e-mailed (viewable with `admin mail list`).
create table outbound_mail (
  id         bigint generated always as identity primary key,
  recipient  text not null,
  subject    text not null,
  body       text not null,
  created_at timestamptz not null default now()
);
