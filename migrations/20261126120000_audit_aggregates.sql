-- Refused sign-ins are aggregated in the audit trail (docs/security.md, "Racing the sign-in
-- lockout with concurrent wrong passwords"): one row per lockout window and key, counting the
-- refusals, instead of one row each. The row is found by its aggregate key, unique, so
-- concurrent refusals add to one row in one statement (insert … on conflict).
alter table audit_events add column aggregate_key text;
create unique index audit_events_aggregate_key_idx on audit_events (aggregate_key) where aggregate_key is not null;
