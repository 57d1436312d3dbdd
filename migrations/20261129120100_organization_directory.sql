-- The organizations directory (docs/directory.md): the nonprofits grantmakers pay, imported from
-- the IRS Exempt Organizations Business Master File (EO BMF) by `organizations import`, keyed by
-- EIN. The columns are the file's fields that the published Organization schema shows (address,
-- classification codes, ruling date, NTEE code); the file's financial fields are not kept.
-- search_name is the name as typeahead compares it (ASCII letters lower-cased and digits, single
-- spaces), generated so no writer can let it drift from name; lower() under "C" lower-cases ASCII
-- only, whatever the database's collation, as src/directory/search-name.ts does for a query. Its
-- trigram index serves `%`, `<%` and prefix LIKE (docs/directory.md, "How search ranks").
create extension if not exists pg_trgm;

create table directory_organizations (
  ein text primary key check (ein ~ '^[0-9]{9}$'),
  name text not null check (btrim(name) <> ''),
  search_name text generated always as (btrim(regexp_replace(lower(name collate "C"), '[^a-z0-9]+', ' ', 'g'))) stored,
  sort_name text,
  in_care_of text,
  street text,
  city text,
  state text,
  postal_code text,
  group_exemption_number text,
  subsection_code text,
  affiliation_code text,
  classification_code text,
  ruling text check (ruling ~ '^[0-9]{6}$'),
  deductibility_code text,
  foundation_code text,
  organization_code text,
  exempt_status_code text,
  filing_requirement_code text,
  ntee_code text,
  source text not null check (source in ('irs_bmf', 'demo')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create index directory_organizations_search_name_trgm_idx on directory_organizations using gin (search_name gin_trgm_ops);
