-- An API key's name, given when it is made (the dashboard's form, the CLI's --name), so a list
-- of keys says which is which (docs/accounts.md, "Organization pages"). Keys made before have
-- none.
alter table api_keys add column name text check (name is null or char_length(name) between 1 and 100);
