-- Scenario "mappers_placeholder": the column mappers (column.truncate.to.N.chars,
-- column.mask.hash) convert the value Debezium's converter returns, so the NOT NULL
-- placeholder of a delete's before image (REPLICA IDENTITY DEFAULT: only the key is sent),
-- the column default, is cut or hashed too.
CREATE TABLE p (id integer PRIMARY KEY, g varchar NOT NULL DEFAULT '日本語のテキスト', h text NOT NULL DEFAULT 'hash me', c text NOT NULL);
INSERT INTO p VALUES (1, 'abcdefghij', 'x', 'y');
