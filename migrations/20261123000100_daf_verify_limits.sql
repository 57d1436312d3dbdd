-- The DAF verify rate limit as one counter row per provider and environment, so an attempt
-- can be reserved with a single conditional upsert before its code is looked up (concurrent
-- attempts serialise on the row and cannot all pass a count taken before any was recorded).
-- A window starts with its first attempt and lasts 15 minutes; a correct code gives its
-- attempt back, so only failures count.
create table donor_token_verify_limits (
  fund_provider_id uuid not null references organizations (id) on delete cascade,
  environment      text not null check (environment in ('production', 'sandbox')),
  window_start     timestamptz not null,
  attempts         integer not null check (attempts >= 0),
  primary key (fund_provider_id, environment)
);

-- The per-failure log it replaces grew without bound and was counted, not reserved.
drop table donor_token_verify_failures;
