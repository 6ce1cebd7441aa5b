-- Changes of scenario "mappers_placeholder".
INSERT INTO p VALUES (2, 'klmnopqrst', 'z', 'w');
DELETE FROM p WHERE id = 1;
