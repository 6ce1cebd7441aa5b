-- Reference scenario "inventory": changes applied AFTER the initial snapshot has completed,
-- while the connector streams. Every statement outside BEGIN/COMMIT is its own (autocommit)
-- transaction. Run with psql -v ON_ERROR_STOP=1 against database "inventory".

-- 1. insert a customer (gets id 5)
INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Jane', 'Doe', 'jane.doe@example.com');

-- 2. update that customer's email
UPDATE inventory.customers SET email = 'jane@doe.example.org' WHERE id = 5;

-- 3. update a product's weight
UPDATE inventory.products SET weight = 5.25 WHERE id = 1;

-- 4. insert an all_types row with values
INSERT INTO inventory.all_types (id, c_smallint, c_integer, c_bigint, c_boolean, c_real, c_double,
  c_numeric, c_text, c_varchar, c_char, c_date, c_timestamp, c_timestamptz, c_uuid, c_json, c_jsonb,
  c_bytea) VALUES
  (3, 32767, -2147483648, 9223372036854775807, false, -0.25, 1e300,
   -0.001, '', 'x', 'abcde', '1970-01-01', '1969-12-31 23:59:59.999999', '2000-01-01 00:00:00-08:00',
   '00000000-0000-0000-0000-000000000000', '[]', '{"k": {"n": 1}}', '\x'::bytea);

-- 5. update it
UPDATE inventory.all_types SET c_integer = 1, c_numeric = 9999999.999, c_text = 'updated', c_bytea = '\xdeadbeef'::bytea WHERE id = 3;

-- 6. delete an order
DELETE FROM inventory.orders WHERE id = 2;

-- 7. delete a customer that has no orders (Anne, id 4)
DELETE FROM inventory.customers WHERE id = 4;

-- 8. one multi-statement transaction
BEGIN;
INSERT INTO inventory.products (name, description, weight) VALUES ('drill', 'cordless drill', 1.75);
INSERT INTO inventory.products (name, description, weight) VALUES ('rope', NULL, 0.5);
UPDATE inventory.products SET description = 'steel hammer' WHERE id = 3;
COMMIT;
