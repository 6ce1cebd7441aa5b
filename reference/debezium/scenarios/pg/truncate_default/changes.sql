-- Changes of scenario "truncate_default".
INSERT INTO ta VALUES (2, 'a2');
TRUNCATE ta;
INSERT INTO ta VALUES (3, 'a3');
DELETE FROM ta WHERE id = 3;
