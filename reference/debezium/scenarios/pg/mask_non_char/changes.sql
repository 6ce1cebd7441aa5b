-- Changes of scenario "mask_non_char".
INSERT INTO m VALUES (2, NULL, 'x', NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE m SET n = 43, amount = 0.01 WHERE id = 1;
