-- Sign-ins that really end (docs/accounts.md, "Sessions"). A user's credentials epoch rises
-- with every change that must end their sign-ins (a password reset or change, a second factor
-- removed or reset, the account disabled); each browser session, sign-in in progress and
-- pending second-factor step is bound to the epoch it was proven under and is refused once
-- the epoch has moved on.
alter table users add column credentials_epoch integer not null default 0;

-- Our record of each signed-in browser session (the provider's Session row holds the cookie's
-- state; this holds what the Security page lists and what binds the session to the epoch).
create table browser_sessions (
  id uuid primary key default gen_random_uuid(),
  environment text not null check (environment in ('production', 'sandbox')),
  session_uid text not null,
  user_id uuid not null references users (id) on delete cascade,
  credentials_epoch integer not null,
  amr text[] not null,
  signed_in_at timestamptz not null,
  -- When this session last proved a second factor (sign-in, step-up or re-check): factor
  -- changes need one in the last 10 minutes.
  factor_proved_at timestamptz,
  last_seen_at timestamptz not null default now(),
  ip inet,
  user_agent text,
  expires_at timestamptz not null,
  unique (environment, session_uid)
);
create index browser_sessions_user_idx on browser_sessions (user_id);
create index browser_sessions_expires_idx on browser_sessions (expires_at);

-- Sessions signed in before this migration keep working: each gets its record at epoch 0.
insert into browser_sessions (environment, session_uid, user_id, credentials_epoch, amr, signed_in_at, factor_proved_at, expires_at)
select s.environment, s.uid, u.id, 0,
       coalesce(array(select jsonb_array_elements_text(s.payload -> 'amr')), array['pwd']),
       to_timestamp(coalesce((s.payload ->> 'loginTs')::bigint, extract(epoch from now())::bigint)),
       null,
       coalesce(s.expires_at, now() + interval '14 days')
from oidc_models s
join users u on u.id::text = s.payload ->> 'accountId'
where s.model = 'Session' and s.uid is not null and (s.expires_at is null or s.expires_at > now())
on conflict (environment, session_uid) do nothing;
