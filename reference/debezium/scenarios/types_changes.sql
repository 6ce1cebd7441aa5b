-- Reference scenario "types": applied while the connector streams (after the snapshot).
-- One transaction that inserts a copy (id + 100) of every row of every table of schema
-- "types", tables in name order, rows in id order: pgoutput then carries exactly the values
-- the snapshot read, so snapshot and streaming conversions can be compared value by value.
DO $$
DECLARE
  t record;
  cols text;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'types' AND c.relkind = 'r' ORDER BY c.relname LOOP
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
      FROM pg_attribute WHERE attrelid = ('types.' || quote_ident(t.relname))::regclass
       AND attnum > 1 AND NOT attisdropped;
    EXECUTE format('INSERT INTO types.%I SELECT id + 100, %s FROM types.%I ORDER BY id', t.relname, cols, t.relname);
  END LOOP;
END
$$;
