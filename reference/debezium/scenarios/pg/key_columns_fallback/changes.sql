-- Changes of scenario "key_columns_fallback".
INSERT INTO a VALUES (2, 'y', 2);
SELECT pg_sleep(1);
ALTER TABLE a DROP COLUMN code;
INSERT INTO a VALUES (3, 3);
UPDATE a SET v = 4 WHERE id = 1;
DELETE FROM a WHERE id = 2;
INSERT INTO b VALUES (2, 2);
DELETE FROM b WHERE id = 1;
INSERT INTO c VALUES (2, NULL, 2);
UPDATE c SET id = 3 WHERE id = 1;
DELETE FROM c WHERE id = 2;
