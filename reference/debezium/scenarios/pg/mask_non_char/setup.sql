-- Scenario "mask_non_char": column.mask.with.N.chars and column.mask.hash on columns that are not
-- character columns (integer, numeric as a string under decimal.handling.mode=string, uuid,
-- jsonb): Debezium's MaskStrings masks only CHAR/VARCHAR-like JDBC types and passes the others
-- through, their fields still marked masked=true; the text and varchar columns are masked.
CREATE TABLE m (id integer PRIMARY KEY, t text, vc varchar(20), n integer, amount numeric(10,2), u uuid, j jsonb, h text, hu uuid);
INSERT INTO m VALUES (1, 'secret', 'vsecret', 42, 12.50, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', 'hashme', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
