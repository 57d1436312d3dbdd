-- Typo tolerance through the directory's distinct words, not its names (docs/directory.md, "How
-- search ranks"): a query's words are corrected against directory_words (a few thousand rows),
-- then names holding every corrected word come from a GIN index on search_words (text[]), whose
-- posting lists are those of a few whole words, not of every three-letter group of the query.
-- The words table is kept by statement triggers, so every writer of directory_organizations keeps
-- it without knowing of it; the import, whose thousand statements would each update most words,
-- turns them off for its transaction (almoner.directory_words = 'recount') and counts the words
-- afresh once at its end (recountDirectoryWords). The trigram index on search_name, which served
-- the typo scans, is no longer read.
create extension if not exists fuzzystrmatch;

-- The words of search_name (a generated column cannot read another, so the same expression).
alter table directory_organizations
  add column search_words text[] generated always as
    (string_to_array(btrim(regexp_replace(lower(name collate "C"), '[^a-z0-9]+', ' ', 'g')), ' ')) stored;
create index directory_organizations_search_words_idx on directory_organizations using gin (search_words);

-- Each distinct word of the names, with how many names hold it (the commonest correction first).
create table directory_words (
  word text primary key,
  names integer not null
);
-- Byte order, for a typed prefix's words and a word's neighbours by first letter.
create index directory_words_prefix_idx on directory_words ((word collate "C"));

insert into directory_words (word, names)
select w, count(*) from directory_organizations, lateral (select distinct w from unnest(search_words) as w) as u
where w <> '' group by w;

-- Adds each changed row's new words and takes away its old ones, in word order (two writers
-- touch shared words in one order, so they wait for each other rather than deadlock); a word no
-- name holds any more is deleted.
create function directory_words_count() returns trigger language plpgsql as $$
declare
  changes jsonb;
begin
  if current_setting('almoner.directory_words', true) = 'recount' then return null; end if;
  if tg_op = 'INSERT' then
    insert into directory_words as d (word, names)
      select w, count(*) from new_rows, lateral (select distinct w from unnest(new_rows.search_words) as w) as u where w <> '' group by w order by w
      on conflict (word) do update set names = d.names + excluded.names;
    return null;
  elsif tg_op = 'DELETE' then
    select jsonb_object_agg(w, n) into changes
      from (select w, -count(*) as n from old_rows, lateral (select distinct w from unnest(old_rows.search_words) as w) as u group by w) as c;
  else
    select jsonb_object_agg(w, n) into changes from (
      select w, sum(delta) as n from (
        select w, 1 as delta from new_rows, lateral (select distinct w from unnest(new_rows.search_words) as w) as u
        union all select w, -1 from old_rows, lateral (select distinct w from unnest(old_rows.search_words) as w) as u) as u
      group by w having sum(delta) <> 0) as c;
  end if;
  if changes is null then return null; end if;
  insert into directory_words as d (word, names)
    select key, value::integer from jsonb_each_text(changes) where key <> '' order by key
    on conflict (word) do update set names = d.names + excluded.names;
  delete from directory_words
    where names <= 0 and word in (select key from jsonb_each_text(changes) where value::integer < 0);
  return null;
end $$;

create trigger directory_words_on_insert after insert on directory_organizations
  referencing new table as new_rows for each statement execute function directory_words_count();
create trigger directory_words_on_update after update on directory_organizations
  referencing new table as new_rows old table as old_rows for each statement execute function directory_words_count();
create trigger directory_words_on_delete after delete on directory_organizations
  referencing old table as old_rows for each statement execute function directory_words_count();

drop index directory_organizations_search_name_trgm_idx;
