-- The client registry's revisions (docs/operations.md, "The clients file across machines"):
-- each time a clients file becomes the registry in oauth_clients, a row says which content
-- (registryContentHash of its entries), when and from where. The highest revision is the
-- current one; a process whose file is an older or diverging one refuses to apply it.
create table oauth_clients_revisions (
  revision integer primary key check (revision > 0),
  content_hash text not null,
  clients integer not null,
  applied_at timestamptz not null default now(),
  applied_by text not null
);
create index oauth_clients_revisions_content_hash on oauth_clients_revisions (content_hash);
