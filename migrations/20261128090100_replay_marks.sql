-- Values a client may present once (docs/bank-data.md, "Replays"): a client assertion's jti and a
-- DPoP proof's jti, at the token endpoint and at the resource gateway. Claiming one is a single
-- insert, so two processes cannot both accept the same value. A row lives as long as the value
-- could still be accepted, then the sweep deletes it.
create table replay_marks (
  environment text not null check (environment in ('production', 'sandbox')),
  scope text not null,
  key text not null,
  expires_at timestamptz not null,
  primary key (environment, scope, key)
);
create index replay_marks_expires_at on replay_marks (expires_at);
