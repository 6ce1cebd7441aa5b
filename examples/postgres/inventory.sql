-- The demo's "inventory" database: customers, products and orders with
-- foreign keys, seeded so that the connector's snapshot has rows to read.
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
INSERT INTO inventory.customers (first_name, last_name, email) VALUES
  ('Sally', 'Thomas', 'sally.thomas@acme.com'),
  ('George', 'Bailey', 'gbailey@foobar.com'),
  ('Edward', 'Walker', 'ed@walker.com'),
  ('Anne', 'Kretchmar', 'annek@noanswer.org');
INSERT INTO inventory.products (name, description, weight) VALUES
  ('scooter', 'Small 2-wheel scooter', 3.14),
  ('car battery', '12V car battery', 8.1),
  ('hammer', '12oz carpenter''s hammer', 0.75);
INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES
  ('2016-01-16', 1, 1, 1),
  ('2016-01-17', 2, 2, 2),
  ('2016-02-19', 2, 2, 3);
