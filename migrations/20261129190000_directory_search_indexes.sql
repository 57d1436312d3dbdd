-- The directory's name search at a million names (docs/directory.md, "How search ranks"): names
-- starting with the query are read from an index in order and LIMITed, not gathered from the
-- trigram index and sorted. A btree on search_name under "C" (byte order: search_name is ASCII)
-- serves `search_name collate "C" like 'q%' order by search_name collate "C" limit K`. The GIN
-- trigram index stays for the typo-tolerant candidates (`<<%`, `<%`); a GiST trigram index,
-- which could order them by distance (`<<->`), read nearly all its 149 MB per typo query on the
-- 1,000,000-name demo directory (0.3 to 1.5 s), so it was measured and not kept.
create index directory_organizations_search_name_prefix_idx on directory_organizations ((search_name collate "C"));
