-- The double-entry ledger (docs/ledger.md): accounts, transfers and their entries. Every balance
-- change is a transfer whose entries sum to zero, written in the transaction of the change that
-- causes it; the database itself holds the rules below, whatever the code above it does.

-- An account of the ledger. Purposes (docs/ledger.md, "Accounts and purposes"):
--   available   an organization's settled money it may use (a financial account's available part)
--   held        an organization's money held for disbursements in flight
--   clearing    money between Almoner and the outside world (inbound transfers not yet settled)
--   settlement  what Almoner's bank settles with (the platform's side of payouts and fees)
--   external    the outside world (donors, banks, payees): money arriving makes it negative
-- `balance` is the sum of the account's entries, kept by ledger_entries_apply only.
create table ledger_accounts (
  id              text primary key,
  environment     text not null check (environment in ('production', 'sandbox')),
  -- Money records outlive nothing silently: an organization with ledger accounts is not deleted.
  organization_id uuid references organizations (id) on delete restrict,
  purpose         text not null check (purpose in ('available', 'held', 'clearing', 'settlement', 'external')),
  -- Customer money may not go below zero; the outside world's accounts may.
  may_go_negative boolean not null,
  balance         bigint not null default 0,
  created_at      timestamptz not null default now(),
  constraint ledger_accounts_floor check (may_go_negative or balance >= 0),
  constraint ledger_accounts_customer_floored check (purpose not in ('available', 'held') or not may_go_negative),
  constraint ledger_accounts_customer_owned check (purpose not in ('available', 'held') or organization_id is not null),
  -- The target of the entries' (account, environment) key: an entry is in its account's environment.
  constraint ledger_accounts_environment_key unique (id, environment)
);
create index ledger_accounts_org_idx on ledger_accounts (organization_id, environment);

-- One movement of money, for one reason: `kind` (what happened) of `reference` (what caused it).
create table ledger_transfers (
  id             text primary key,
  environment    text not null check (environment in ('production', 'sandbox')),
  kind           text not null check (kind ~ '^[a-z][a-z0-9_]{0,63}$'),
  reference_type text not null check (reference_type ~ '^[a-z][a-z0-9_]{0,63}$'),
  reference_id   text not null check (length(reference_id) between 1 and 200),
  created_at     timestamptz not null default now(),
  -- The same transfer for the same reference happens once: a replay cannot move money twice.
  constraint ledger_transfers_reference_key unique (environment, kind, reference_type, reference_id),
  constraint ledger_transfers_environment_key unique (id, environment)
);
-- A hold ends once, released or settled, never both (docs/ledger.md, "Holds").
create unique index ledger_transfers_hold_end_key on ledger_transfers (environment, reference_type, reference_id)
  where kind in ('hold_release', 'hold_settle');

-- One leg of a transfer: `amount` (cents) is added to the account's balance.
create table ledger_entries (
  id          text primary key,
  transfer_id text not null,
  account_id  text not null,
  environment text not null,
  amount      bigint not null check (amount <> 0),
  created_at  timestamptz not null default now(),
  constraint ledger_entries_transfer_fkey foreign key (transfer_id, environment) references ledger_transfers (id, environment),
  constraint ledger_entries_account_fkey foreign key (account_id, environment) references ledger_accounts (id, environment)
);
create index ledger_entries_transfer_idx on ledger_entries (transfer_id);
create index ledger_entries_account_idx on ledger_entries (account_id);

-- A new account starts at zero; its identity never changes, and its balance changes only
-- through ledger_entries_apply (a trigger one level down: pg_trigger_depth() > 1).
create function ledger_accounts_guard() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    if new.balance <> 0 then
      raise exception 'a ledger account opens with a zero balance' using errcode = 'check_violation';
    end if;
    return new;
  end if;
  if new.id <> old.id or new.environment <> old.environment or new.organization_id is distinct from old.organization_id
     or new.purpose <> old.purpose or new.may_go_negative <> old.may_go_negative or new.created_at <> old.created_at then
    raise exception 'ledger account % cannot be changed', old.id using errcode = 'check_violation';
  end if;
  if new.balance <> old.balance and pg_trigger_depth() < 2 then
    raise exception 'the balance of ledger account % changes only by posting entries', old.id using errcode = 'check_violation';
  end if;
  return new;
end $$;
create trigger ledger_accounts_guard before insert or update on ledger_accounts
  for each row execute function ledger_accounts_guard();

-- Each entry moves its account's balance. The row lock of this update serialises concurrent
-- postings on one account, and the WHERE re-reads the locked row, so a floored account cannot
-- be taken below zero by any interleaving; ledger_accounts_floor is the backstop.
create function ledger_entries_apply() returns trigger language plpgsql as $$
begin
  update ledger_accounts set balance = balance + new.amount
    where id = new.account_id and (may_go_negative or balance + new.amount >= 0);
  if not found then
    raise exception 'insufficient balance in ledger account %', new.account_id
      using errcode = 'check_violation', constraint = 'ledger_accounts_floor', detail = new.account_id;
  end if;
  return null;
end $$;
create trigger ledger_entries_apply after insert on ledger_entries
  for each row execute function ledger_entries_apply();

-- Entries and transfers are append-only: a mistake is corrected by a new transfer.
create function ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only (% refused)', tg_table_name, tg_op using errcode = 'restrict_violation';
end $$;
create trigger ledger_entries_append_only before update or delete on ledger_entries
  for each row execute function ledger_append_only();
create trigger ledger_entries_no_truncate before truncate on ledger_entries
  for each statement execute function ledger_append_only();
create trigger ledger_transfers_append_only before update or delete on ledger_transfers
  for each row execute function ledger_append_only();
create trigger ledger_transfers_no_truncate before truncate on ledger_transfers
  for each statement execute function ledger_append_only();

-- At commit, every transfer touched in the transaction has at least two entries summing to zero.
create function ledger_transfer_balanced() returns trigger language plpgsql as $$
declare
  checked text;
  total numeric;
  legs bigint;
begin
  -- Each branch names only its own table's column (plpgsql resolves a record field when it runs).
  if tg_table_name = 'ledger_transfers' then
    checked := new.id;
  else
    checked := new.transfer_id;
  end if;
  select coalesce(sum(amount), 0), count(*) into total, legs from ledger_entries where transfer_id = checked;
  if legs < 2 or total <> 0 then
    raise exception 'ledger transfer % is unbalanced (% entries summing to %)', checked, legs, total
      using errcode = 'check_violation', constraint = 'ledger_transfer_balanced';
  end if;
  return null;
end $$;
create constraint trigger ledger_transfer_balanced after insert on ledger_transfers
  deferrable initially deferred for each row execute function ledger_transfer_balanced();
create constraint trigger ledger_entry_balanced after insert on ledger_entries
  deferrable initially deferred for each row execute function ledger_transfer_balanced();
