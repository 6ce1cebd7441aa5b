-- Changes of scenario "columns".
INSERT INTO s1.people VALUES (2, 'bob@example.com', 'Bob', 'secret!!', 'short', 1.25, 41);
UPDATE s1.people SET name = 'Robert', bio = NULL WHERE id = 2;
DELETE FROM s1.people WHERE id = 1;
INSERT INTO s1.skipme VALUES (2, 'y');
INSERT INTO s1.nokey VALUES (2, 'two');
INSERT INTO s2.other VALUES (2, 'y');
