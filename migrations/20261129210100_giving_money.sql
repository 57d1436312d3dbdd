-- DAFpay giving's money (docs/giving.md, "Money"; docs/ledger.md, "Accounts and purposes"): a
-- completed grant for a nonprofit not on Almoner pays the environment's `dafpay_network` account
-- (a clearing account the DAFpay Network passes on from), and nonprofits and platforms are paid
-- into a `processing` financial account per environment.
alter table platform_ledger_accounts drop constraint platform_ledger_accounts_purpose_check;
alter table platform_ledger_accounts add constraint platform_ledger_accounts_purpose_check
  check (purpose in ('external', 'dafpay_network'));

-- The processing accounts of the nonprofits and platforms added before: a pair of ledger
-- accounts (available, held) and the financial account over it, per environment. New ones get
-- theirs when added (src/grantmaking/provisioning.ts). Ids in the shapes the code gives (26
-- characters of [0-9a-z] after the prefix).
create temporary table giving_backfill as
  select o.id as organization_id, e.environment,
         'lacct_' || substr(md5(random()::text || clock_timestamp()::text || o.id::text || e.environment), 1, 26) as available_id,
         'lacct_' || substr(md5(clock_timestamp()::text || random()::text || e.environment || o.id::text), 1, 26) as held_id,
         'account_' || substr(md5(o.id::text || e.environment || random()::text), 1, 26) as account_id
  from organizations o
  cross join (values ('production'), ('sandbox')) as e (environment)
  where o.kind in ('nonprofit', 'platform')
    and not exists (select 1 from financial_accounts f
                    where f.organization_id = o.id and f.environment = e.environment and f.account_type = 'processing');

insert into ledger_accounts (id, environment, organization_id, purpose, may_go_negative)
  select available_id, environment, organization_id, 'available', false from giving_backfill
  union all
  select held_id, environment, organization_id, 'held', false from giving_backfill;

insert into financial_accounts (id, environment, organization_id, account_type, name, bank_provider,
                                available_ledger_account_id, held_ledger_account_id)
  select account_id, environment, organization_id, 'processing', 'Processing',
         case environment when 'sandbox' then 'mock_alpha' else 'manual' end, available_id, held_id
  from giving_backfill;

drop table giving_backfill;
