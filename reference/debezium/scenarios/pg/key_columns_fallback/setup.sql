-- Scenario "key_columns_fallback": message.key.columns naming a column the table does not
-- have (public.b:nosuch) or no longer has (public.a:code, dropped while streaming): Debezium's
-- Key.CustomKeyMapper falls back to the primary key when no listed column matches. A listed
-- column of a type Debezium leaves out (interval[], public.c:spans) leaves the key an empty struct.
CREATE TABLE a (id integer PRIMARY KEY, code text, v integer);
CREATE TABLE b (id integer PRIMARY KEY, v integer);
INSERT INTO a VALUES (1, 'x', 1);
INSERT INTO b VALUES (1, 1);
CREATE TABLE c (id integer PRIMARY KEY, spans interval[], v integer);
INSERT INTO c VALUES (1, ARRAY['1 day'::interval], 1);
