-- Changes of scenario "partitioned_generated".
INSERT INTO measures VALUES (3, 'eu', 30);
UPDATE measures SET v = 21 WHERE id = 2;
UPDATE measures SET region = 'us' WHERE id = 1;
INSERT INTO gen (id, a, b) VALUES (2, 7, 'y');
UPDATE gen SET a = 6 WHERE id = 1;
DELETE FROM gen WHERE id = 2;
