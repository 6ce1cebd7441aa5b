-- Changes of scenario "rename_midstream". The pg_sleep calls let the reader decode each
-- Relation message before the next DDL renames its table: Debezium reads nullability and keys
-- from the catalog by name when it decodes, so a rename that lands first leaves it a table it
-- cannot find (null key, every column optional) and the capture would depend on timing.
CREATE TABLE fresh (id integer PRIMARY KEY, v text);
INSERT INTO fresh VALUES (1, 'f1');
SELECT pg_sleep(1.5);
ALTER TABLE fresh RENAME TO renamed;
INSERT INTO renamed VALUES (2, 'f2');
BEGIN;
UPDATE renamed SET v = 'x' WHERE id = 1;
INSERT INTO a VALUES (2, 'a2');
UPDATE renamed SET id = 20 WHERE id = 2;
COMMIT;
SELECT pg_sleep(1.5);
ALTER TABLE a RENAME TO a_new;
INSERT INTO a_new VALUES (3, 'a3');
DELETE FROM a_new WHERE id = 1;
SELECT pg_sleep(1.5);
ALTER TABLE renamed SET SCHEMA other;
INSERT INTO other.renamed VALUES (4, 'f4');
BEGIN;
INSERT INTO a_new VALUES (4, 'a4');
INSERT INTO other.renamed VALUES (5, 'f5');
COMMIT;
