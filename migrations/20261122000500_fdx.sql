-- FDX bank-account data: a nonprofit's deposit accounts held with the service, their monthly
-- statements and their transactions. Accounts belong to one environment and one organization;
-- statements and transactions are reached only through their account.

create table deposit_accounts (
  id                     uuid primary key default gen_random_uuid(),
  environment            text not null check (environment in ('production', 'sandbox')),
  organization_id        uuid not null references organizations (id) on delete cascade,
  -- Stored whole; responses also give a masked accountNumberDisplay.
  account_number         text not null check (account_number ~ '^[0-9]{4,17}$'),
  routing_transit_number text not null check (routing_transit_number ~ '^[0-9]{9}$'),
  product_name           text not null,
  nickname               text,
  description            text,
  status                 text not null default 'OPEN'
                         check (status in ('OPEN', 'CLOSED', 'DELINQUENT', 'NEGATIVECURRENTBALANCE', 'PAID', 'PENDINGCLOSE', 'PENDINGOPEN', 'RESTRICTED')),
  currency               text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  opened_on              date not null,
  closed_on              date,
  -- Balance in cents when the account opened, before its first transaction; later balances
  -- are this plus the posted transactions, so they can never disagree with them.
  opening_balance        bigint not null default 0,
  created_at             timestamptz not null default now(),
  constraint deposit_accounts_closed_check check (closed_on is null or closed_on >= opened_on)
);
-- The list query: one organization's accounts in one environment, keyset-paged.
create index deposit_accounts_page_idx on deposit_accounts (organization_id, environment, created_at, id);

create table deposit_statements (
  id           uuid primary key default gen_random_uuid(),
  account_id   uuid not null references deposit_accounts (id) on delete cascade,
  period_start date not null,
  period_end   date not null,
  created_at   timestamptz not null default now(),
  constraint deposit_statements_period_check check (period_end >= period_start),
  -- One statement per account per period.
  constraint deposit_statements_period_key unique (account_id, period_start)
);
-- The list query: an account's statements by statement date (period end), keyset-paged.
create index deposit_statements_page_idx on deposit_statements (account_id, period_end, id);

create table deposit_transactions (
  id                    uuid primary key default gen_random_uuid(),
  account_id            uuid not null references deposit_accounts (id) on delete cascade,
  transaction_timestamp timestamptz not null,
  posted_timestamp      timestamptz,
  status                text not null check (status in ('POSTED', 'PENDING')),
  debit_credit          text not null check (debit_credit in ('DEBIT', 'CREDIT')),
  -- Cents, always positive: debit_credit gives the direction.
  amount                bigint not null check (amount > 0),
  transaction_type      text not null check (transaction_type in ('ADJUSTMENT', 'ATMDEPOSIT', 'ATMWITHDRAWAL', 'BILLPAYMENT', 'CHECK', 'DEPOSIT', 'DIRECTDEPOSIT', 'DIVIDEND', 'FEE', 'INTEREST', 'POSCREDIT', 'POSDEBIT', 'PREAUTHORIZEDDEPOSIT', 'PREAUTHORIZEDWITHDRAWAL', 'TRANSFER', 'WITHDRAWAL')),
  description           text not null,
  memo                  text,
  reference             text not null,
  payee                 text,
  check_number          integer check (check_number > 0),
  created_at            timestamptz not null default now(),
  -- A posted transaction has its posting time; a pending one has none yet.
  constraint deposit_transactions_posted_check check ((status = 'POSTED') = (posted_timestamp is not null))
);
-- The list query: an account's transactions by transaction time, keyset-paged and date-filtered.
create index deposit_transactions_page_idx on deposit_transactions (account_id, transaction_timestamp, id);
-- Statements and balances: an account's posted transactions by posting time.
create index deposit_transactions_posted_idx on deposit_transactions (account_id, posted_timestamp, id) where status = 'POSTED';
