-- Fair webhooks (docs/security.md, "One tenant's webhooks starving the others").
--
-- Failed attempts in a row, reset by a success or a resume: a subscription that reaches
-- webhook_pause_after_failures is paused (status requires_attention) until resumed.
alter table event_subscriptions add column consecutive_failures integer not null default 0;

-- One subscription per URL and category in an organization's environment, which the service
-- holds from now on (under a lock of the organization's). Copies made before this migration
-- (they sent every event twice or more to the same URL): the oldest stays, the later ones are
-- deleted, as PATCH /v1/event_subscriptions/{id} {"status":"deleted"} would.
update event_subscriptions s
   set status = 'deleted', updated_at = now()
 where s.status <> 'deleted'
   and exists (
     select 1 from event_subscriptions o
      where o.organization_id = s.organization_id and o.environment = s.environment
        and o.category = s.category and o.url = s.url and o.status <> 'deleted'
        and (o.created_at, o.id) < (s.created_at, s.id));

-- The claim counts the attempts in flight per organization and subscription (leased rows).
create index webhook_deliveries_in_flight_idx on webhook_deliveries (subscription_id, locked_until) where status = 'pending' and locked_until is not null;
