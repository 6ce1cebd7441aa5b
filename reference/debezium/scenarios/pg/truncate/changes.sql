-- Changes of scenario "truncate".
INSERT INTO ta VALUES (2, 'a2');
TRUNCATE ta;
INSERT INTO tb VALUES (1, 'b1');
INSERT INTO tc VALUES ('c1');
TRUNCATE ta, tb, tc;
BEGIN;
INSERT INTO ta VALUES (3, 'a3');
TRUNCATE tb;
INSERT INTO tb VALUES (4, 'b4');
COMMIT;
DELETE FROM ta WHERE id = 3;
