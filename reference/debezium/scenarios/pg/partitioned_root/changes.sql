-- Changes of scenario "partitioned_root".
INSERT INTO measures VALUES (3, 'eu', 30);
UPDATE measures SET v = 21 WHERE id = 2;
UPDATE measures SET region = 'us' WHERE id = 1;
BEGIN;
UPDATE measures SET region = 'eu', v = 22 WHERE id = 2;
DELETE FROM measures WHERE id = 3;
COMMIT;
CREATE TABLE measures_ap (id integer NOT NULL, region text NOT NULL, v integer);
ALTER TABLE measures_ap REPLICA IDENTITY FULL;
ALTER TABLE measures ATTACH PARTITION measures_ap FOR VALUES IN ('ap');
INSERT INTO measures VALUES (4, 'ap', 40);
UPDATE measures SET region = 'ap' WHERE id = 1;
