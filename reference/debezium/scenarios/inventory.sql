-- Reference scenario "inventory": schema + seed data loaded BEFORE the connector starts,
-- so every row below is captured by the initial snapshot.
-- Used by reference/debezium (Debezium peer) and by connectd's own golden tests.
-- Run against database "inventory" with psql -v ON_ERROR_STOP=1.

CREATE SCHEMA inventory;

CREATE TABLE inventory.customers (
  id serial PRIMARY KEY,
  first_name varchar(255) NOT NULL,
  last_name varchar(255) NOT NULL,
  email varchar(255) NOT NULL UNIQUE
);

CREATE TABLE inventory.products (
  id serial PRIMARY KEY,
  name varchar(255) NOT NULL,
  description varchar(512),
  weight double precision
);

CREATE TABLE inventory.orders (
  id serial PRIMARY KEY,
  order_date date NOT NULL,
  purchaser integer NOT NULL REFERENCES inventory.customers(id),
  quantity integer NOT NULL,
  product_id integer NOT NULL REFERENCES inventory.products(id)
);

CREATE TABLE inventory.all_types (
  id integer PRIMARY KEY,
  c_smallint smallint,
  c_integer integer,
  c_bigint bigint,
  c_boolean boolean,
  c_real real,
  c_double double precision,
  c_numeric numeric(10,3),
  c_text text,
  c_varchar varchar(20),
  c_char char(5),
  c_date date,
  c_timestamp timestamp,
  c_timestamptz timestamptz,
  c_uuid uuid,
  c_json json,
  c_jsonb jsonb,
  c_bytea bytea,
  c_notnull_int integer NOT NULL DEFAULT 7
);

INSERT INTO inventory.customers (first_name, last_name, email) VALUES
  ('Sally', 'Thomas', 'sally.thomas@acme.com'),
  ('George', 'Bailey', 'gbailey@foobar.com'),
  ('Edward', 'Walker', 'ed@walker.com'),
  ('Anne', 'Kretchmar', 'annek@noanswer.org');

INSERT INTO inventory.products (name, description, weight) VALUES
  ('scooter', 'Small 2-wheel scooter', 3.14),
  ('car battery', '12V car battery', 8.1),
  ('hammer', NULL, NULL);

INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES
  ('2016-01-16', 1, 1, 1),
  ('2016-01-17', 2, 2, 2);

INSERT INTO inventory.all_types (id, c_smallint, c_integer, c_bigint, c_boolean, c_real, c_double,
  c_numeric, c_text, c_varchar, c_char, c_date, c_timestamp, c_timestamptz, c_uuid, c_json, c_jsonb,
  c_bytea, c_notnull_int) VALUES
  (1, -32768, 2147483647, -9223372036854775807, true, 1.5, -2.718281828459045,
   12345.678,
   'héllo "wörld"' || E'\n' || 'tab' || E'\t' || 'end <a href="x">&amp;</a> \ / ' || U&'\2028' || E'\x01\x1f\x7f' || ' 😀',
   'varchar ünïcode', 'ab',
   '2024-02-29', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.654321+05:30',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": 2, "a": [1, 2.5, null]}', '{"b": 2, "a": [1, 2.5, null]}',
   '\x00ff10'::bytea, 42),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, DEFAULT);
