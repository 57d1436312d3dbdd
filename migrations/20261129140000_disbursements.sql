-- Grantmakers' disbursements (docs/grantmaking.md, "Disbursements"): money sent from a financial
-- account to a directory organization. A disbursement moves money through a hold on the ledger
-- (docs/ledger.md, "Holds"), whose reference is `disbursement` and this id: placed when it is
-- submitted, settled to the external account when it completes, released when it fails. Its
-- balances are the ledger's; nothing here stores money but the amounts asked for.

create table disbursements (
  id                        text primary key check (id ~ '^disbursement_[0-9a-z]{26}$'),
  environment               text not null check (environment in ('production', 'sandbox')),
  -- The grantmaker that sends it. Money records are not deleted with their organization.
  organization_id           uuid not null references organizations (id) on delete restrict,
  financial_account_id      text not null,
  program_id                text not null references programs (id) on delete restrict,
  -- The recipient: a directory organization, by its published org_ id (docs/directory.md).
  recipient_organization_id text not null references directory_organizations (id) on delete restrict,
  amount                    bigint not null check (amount > 0),
  description               text,
  status                    text not null default 'pending_approval' check (status in (
    'pending_approval', 'canceled', 'awaiting_verification', 'rejected', 'validating_organization',
    'awaiting_account_claim', 'awaiting_balance', 'submitted', 'stopped', 'completed', 'failed')),
  -- The create request's Idempotency-Key, for GET /v1/disbursements?idempotency_key=.
  idempotency_key           text,
  -- Who asked for it and who approved it: `api_key:<id>` or `user:<id>`.
  created_by                text not null,
  approved_by               text,
  approved_at               timestamptz,
  canceled_at               timestamptz,
  -- The bank's evidence an operator settled it with in production (`admin disbursements`).
  settlement_reference      text,
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now(),
  constraint disbursements_account_fkey foreign key (financial_account_id, environment)
    references financial_accounts (id, environment),
  constraint disbursements_approval_check check ((approved_by is null) = (approved_at is null))
);
create index disbursements_page_idx on disbursements (organization_id, environment, created_at desc, id desc);
create index disbursements_recipient_idx on disbursements (organization_id, environment, recipient_organization_id, created_at desc, id desc);
-- One disbursement per Idempotency-Key of a grantmaker and environment (the published lookup returns at most one).
create unique index disbursements_idempotency_key on disbursements (organization_id, environment, idempotency_key)
  where idempotency_key is not null;
-- The queue an inbound transfer's completion submits from, oldest first.
create index disbursements_awaiting_balance_idx on disbursements (financial_account_id, created_at, id)
  where status = 'awaiting_balance';

-- The create request's transactions (the published Transaction): their net amounts
-- (amount - fee_amount) sum to the disbursement's amount.
create table disbursement_transactions (
  id                      text primary key check (id ~ '^transaction_[0-9a-z]{26}$'),
  disbursement_id         text not null references disbursements (id) on delete restrict,
  position                integer not null check (position >= 0),
  amount                  bigint not null check (amount > 0),
  fee_amount              bigint check (fee_amount >= 0 and fee_amount < amount),
  type                    text not null check (type in ('donor_advised_fund_grant', 'corporate_match')),
  internal_transaction_id text,
  purpose                 text,
  note                    text,
  recipient_name          text,
  -- donors, daf_grant, corporate_match and metadata, as given (validated by the route).
  details                 jsonb not null default '{}',
  created_at              timestamptz not null default now(),
  updated_at              timestamptz not null default now(),
  unique (disbursement_id, position)
);
