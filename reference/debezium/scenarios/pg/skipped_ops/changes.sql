-- Changes of scenario "skipped_ops".
INSERT INTO ta VALUES (2, 'a2');
UPDATE ta SET v = 'a2x' WHERE id = 2;
DELETE FROM ta WHERE id = 1;
TRUNCATE ta;
INSERT INTO ta VALUES (3, 'a3');
