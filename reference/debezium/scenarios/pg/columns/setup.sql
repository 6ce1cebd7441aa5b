-- Scenario "columns": message.key.columns, column.include.list / column.exclude.list,
-- column.mask.with.N.chars, column.truncate.to.N.chars, column.mask.hash,
-- column.propagate.source.type, schema.include.list / table.exclude.list.
CREATE SCHEMA s1;
CREATE SCHEMA s2;
CREATE TABLE s1.people (id integer PRIMARY KEY, email varchar(64) NOT NULL, name text, secret char(8), bio varchar(100), score numeric(6,2), age smallint);
CREATE TABLE s1.skipme (id integer PRIMARY KEY, v text);
CREATE TABLE s1.nokey (a integer, b text);
CREATE TABLE s2.other (id integer PRIMARY KEY, v text);
INSERT INTO s1.people VALUES (1, 'ann@example.com', 'Ann', 'pw123456', 'a long biography text', 12.50, 30);
INSERT INTO s1.skipme VALUES (1, 'x');
INSERT INTO s1.nokey VALUES (1, 'one');
INSERT INTO s2.other VALUES (1, 'x');
