-- Resource gateway: API keys and the nonprofit data it serves. Everything here belongs to
-- exactly one environment and is invisible from the other.

create table api_keys (
  id              text primary key,
  environment     text not null check (environment in ('production', 'sandbox')),
  organization_id uuid not null references organizations (id) on delete cascade,
  -- SHA-256 of the whole key (hex); the key itself is shown once and never stored.
  key_hash        text not null,
  -- The first characters, so an admin can tell keys apart (alm_live_Ab12…).
  key_prefix      text not null,
  created_at      timestamptz not null default now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz,
  constraint api_keys_hash_key unique (key_hash)
);
create index api_keys_org_idx on api_keys (organization_id, environment);

-- A Connect: a nonprofit's DAFpay integration; grants arrive through one.
create table connects (
  id              text primary key,
  environment     text not null check (environment in ('production', 'sandbox')),
  organization_id uuid not null references organizations (id) on delete cascade,
  name            text not null,
  created_at      timestamptz not null default now()
);
create index connects_org_idx on connects (organization_id, environment);

create table donations (
  id                 text primary key,
  environment        text not null check (environment in ('production', 'sandbox')),
  organization_id    uuid not null references organizations (id) on delete cascade,
  external_id        text not null,
  payment_source_id  text not null,
  deposit_id         text,
  dafpay_tracking_id text,
  amount_gross       bigint not null check (amount_gross >= 0),
  amount_net         bigint not null check (amount_net >= 0),
  amount_fee         bigint not null check (amount_fee >= 0),
  currency           text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  purpose            text not null default '',
  note               text not null default '',
  primary_donor      jsonb,
  payment_status     text not null check (payment_status in ('INCOMING_TO_CHARIOT', 'INCOMING_OUTSIDE_CHARIOT', 'RECEIVED_IN_CHARIOT', 'RECEIVED_OUTSIDE_CHARIOT', 'CANCELED')),
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  canceled_at        timestamptz
);
-- The list query: one organization's donations in one environment, newest first, keyset-paged.
create index donations_page_idx on donations (organization_id, environment, created_at desc, id desc);

create table grants (
  id                  uuid primary key default gen_random_uuid(),
  environment         text not null check (environment in ('production', 'sandbox')),
  organization_id     uuid not null references organizations (id) on delete cascade,
  connect_id          text not null references connects (id) on delete cascade,
  workflow_session_id uuid not null default gen_random_uuid(),
  tracking_id         text not null,
  fund_id             text not null,
  external_grant_id   text,
  amount              bigint not null check (amount >= 0),
  status              text not null,
  first_name          text,
  last_name           text,
  email               text,
  phone               text,
  note                text,
  payment_channel     text not null default 'direct' check (payment_channel in ('dafpay_network', 'direct')),
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
create index grants_page_idx on grants (organization_id, environment, created_at desc, id desc);
create index grants_connect_idx on grants (connect_id, created_at desc, id desc);
