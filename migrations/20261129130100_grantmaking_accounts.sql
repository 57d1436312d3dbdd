-- Grantmakers' financial accounts, programs and inbound transfers (docs/grantmaking.md). A
-- financial account is the published FinancialAccount over a pair of ledger accounts
-- (docs/ledger.md, "Financial accounts"): its balances are read from the ledger, never stored here.
-- Every grantmaker gets one `disbursements` account and one default program per environment when
-- it is added (src/grantmaking/provisioning.ts).

create table financial_accounts (
  id                          text primary key check (id ~ '^account_[0-9a-z]{26}$'),
  environment                 text not null check (environment in ('production', 'sandbox')),
  -- Money records are not deleted with their organization (as the ledger's accounts are not).
  organization_id             uuid not null references organizations (id) on delete restrict,
  account_type                text not null check (account_type in ('disbursements', 'processing')),
  name                        text not null check (btrim(name) <> ''),
  bank_provider               text not null check (bank_provider ~ '^[a-z][a-z0-9_]{0,63}$'),
  available_ledger_account_id text not null unique,
  held_ledger_account_id      text not null unique,
  created_at                  timestamptz not null default now(),
  updated_at                  timestamptz not null default now(),
  -- The pair is of the account's environment.
  constraint financial_accounts_available_fkey foreign key (available_ledger_account_id, environment)
    references ledger_accounts (id, environment),
  constraint financial_accounts_held_fkey foreign key (held_ledger_account_id, environment)
    references ledger_accounts (id, environment),
  -- The target of the inbound transfers' (account, environment) key.
  constraint financial_accounts_environment_key unique (id, environment)
);
-- One account of each type per organization and environment.
create unique index financial_accounts_type_key on financial_accounts (organization_id, environment, account_type);

create table programs (
  id                        text primary key check (id ~ '^program_[0-9a-z]{26}$'),
  environment               text not null check (environment in ('production', 'sandbox')),
  organization_id           uuid not null references organizations (id) on delete cascade,
  name                      text not null check (btrim(name) <> ''),
  description               text,
  grant_disbursement_status text not null check (grant_disbursement_status in ('enabled', 'disabled')),
  gift_processing_status    text not null check (gift_processing_status in ('enabled', 'disabled')),
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now()
);
create index programs_page_idx on programs (organization_id, environment, created_at desc, id desc);

-- Money arriving from outside into a financial account. It moves money once, on completion: one
-- ledger transfer (kind `deposit`, reference `inbound_transfer` and this id) from the
-- environment's external account, in the transaction that sets `completed`.
create table inbound_transfers (
  id                   text primary key check (id ~ '^inbound_transfer_[0-9a-z]{26}$'),
  environment          text not null check (environment in ('production', 'sandbox')),
  organization_id      uuid not null references organizations (id) on delete restrict,
  financial_account_id text not null,
  amount               bigint not null check (amount > 0),
  description          text,
  status               text not null default 'pending' check (status in ('pending', 'completed', 'canceled', 'failed')),
  -- What the bank gave as evidence when an operator settled it in production (`admin inbound-transfers`).
  settlement_reference text,
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  constraint inbound_transfers_account_fkey foreign key (financial_account_id, environment)
    references financial_accounts (id, environment)
);
create index inbound_transfers_page_idx on inbound_transfers (organization_id, environment, created_at desc, id desc);

-- The environment-wide ledger accounts that belong to no organization (the outside world's
-- `external`), opened on first need under an advisory lock (src/grantmaking/platform-accounts.ts).
create table platform_ledger_accounts (
  environment       text not null check (environment in ('production', 'sandbox')),
  purpose           text not null check (purpose in ('external')),
  ledger_account_id text not null unique,
  primary key (environment, purpose),
  constraint platform_ledger_accounts_account_fkey foreign key (ledger_account_id, environment)
    references ledger_accounts (id, environment)
);
