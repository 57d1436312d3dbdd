-- The browser that opened a pushed authorization request (RFC 9126) first: only that browser
-- may go on with it (docs/bank-data.md, "Pushed authorization requests"), so one request_uri
-- cannot start sign-ins in several browsers. `request_id` is the request's id hashed as
-- oidc_models stores it, `browser` the SHA-256 of the browser's mark (a random cookie). A row
-- lives as long as its request could be opened; the chores' sweep deletes it after.
create table pushed_request_browsers (
  environment text not null check (environment in ('production', 'sandbox')),
  request_id  text not null,
  browser     text not null,
  expires_at  timestamptz not null,
  primary key (environment, request_id)
);
create index pushed_request_browsers_expiry_idx on pushed_request_browsers (expires_at);
