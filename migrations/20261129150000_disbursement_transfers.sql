-- A disbursement's payment attempts on their rails (docs/grantmaking.md, "Rails and transfers"):
-- one row each time the disbursement is submitted, in the transaction of that change; a returned
-- check's retry appends a new row. Money moves on the ledger only (the disbursement's hold); the
-- amount here is what the attempt carries.

create sequence disbursement_check_number_seq start with 100001;

create table disbursement_transfers (
  id              text primary key check (id ~ '^(check|ach|account)_transfer_[0-9a-z]{26}$'),
  disbursement_id text not null references disbursements (id) on delete restrict,
  environment     text not null check (environment in ('production', 'sandbox')),
  rail            text not null check (rail in ('check', 'ach', 'account')),
  amount          bigint not null check (amount > 0),
  -- The published CheckTransfer, AchTransfer and AccountTransfer statuses of each rail.
  status          text not null,
  -- A check's: the PostalAddress it is mailed to, its memo, the payee and its number.
  mailing_address jsonb,
  memo            text check (char_length(memo) <= 72),
  recipient_name  text,
  check_number    text,
  stop_reason     text check (stop_reason in ('mail_delivery_failure', 'not_authorized', 'voided', 'unknown')),
  completed_at    timestamptz,
  returned_at     timestamptz,
  stopped_at      timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  constraint disbursement_transfers_rail_status check (
    (rail = 'check' and status in ('issued', 'deposited', 'stopped', 'returned'))
    or (rail = 'ach' and status in ('submitted', 'completed', 'returned'))
    or (rail = 'account' and status in ('pending_approval', 'complete'))),
  constraint disbursement_transfers_check_fields check (
    (rail = 'check') = (mailing_address is not null and memo is not null and recipient_name is not null and check_number is not null)),
  constraint disbursement_transfers_id_rail check (id like rail || '_transfer_%')
);
-- The disbursement's attempts, oldest first.
create index disbursement_transfers_disbursement_idx on disbursement_transfers (disbursement_id, created_at, id);
-- At most one attempt of a disbursement in flight at a time.
create unique index disbursement_transfers_in_flight on disbursement_transfers (disbursement_id)
  where status in ('issued', 'submitted', 'pending_approval');

-- Who stopped a submitted check (`stop`) and who canceled (`cancelation`): `api_key:<id>`,
-- `user:<id>` or `client:<id>`, as approved_by.
alter table disbursements
  add column canceled_by text,
  add column stopped_by  text,
  add column stopped_at  timestamptz,
  add constraint disbursements_stop_check check ((stopped_at is null) = (status <> 'stopped'));
