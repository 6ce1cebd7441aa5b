-- Test peer scenario "mariadb inventory": changes applied while streaming.
INSERT INTO customers (first_name, last_name, email) VALUES ('Anne', 'Kretchmar', 'annek@noanswer.org');
UPDATE customers SET first_name = 'Anne Marie' WHERE id = 1004;
UPDATE products SET weight = 5.5 WHERE id = 101;
-- every type once through the binlog: a copy of each row (id + 100)
INSERT INTO all_types SELECT id + 100, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u, c_mediumint, c_mediumint_u,
  c_int, c_int_u, c_bigint, c_bigint_u, c_decimal, c_decimal_big, c_float, c_double, c_char, c_varchar, c_text,
  c_date, c_datetime, c_datetime3, c_datetime6, c_timestamp, c_timestamp6, c_time, c_time6, c_year, c_enum, c_set,
  c_bit1, c_bit12, c_json, c_blob, c_binary, c_varbinary, c_notnull FROM all_types ORDER BY id;
UPDATE all_types SET c_int = 42, c_varchar = 'changed' WHERE id = 101;
DELETE FROM orders WHERE order_number = 10002;
BEGIN;
INSERT INTO products (name, description, weight) VALUES ('hammer', '16oz carpenter''s hammer', 1.0);
INSERT INTO products (name, description, weight) VALUES ('rocks', 'box of assorted rocks', NULL);
UPDATE products SET description = 'box of rocks' WHERE name = 'rocks';
COMMIT;
-- a primary key change: Debezium emits a delete (+ tombstone) and a create
UPDATE customers SET id = 1005 WHERE id = 1003;
