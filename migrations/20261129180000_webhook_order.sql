-- Webhooks of one object arrive in the order of its transitions (docs/api.md, "Webhooks").
--
-- An event's place in the order it was written: an object's transitions are written one after
-- another under its row lock, so their events' numbers follow them (created_at is each
-- transaction's start, which a transition that waited for the lock may have taken earlier).
alter table events add column seq bigint generated always as identity;

-- The claim looks for an earlier event of the same object whose delivery to the same URL is pending.
create index events_object_idx on events (associated_object_id, associated_object_type, seq);
create index webhook_deliveries_pending_event_idx on webhook_deliveries (event_id) where status = 'pending';
