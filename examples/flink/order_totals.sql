-- A Flink SQL job on connectd's change topics (the demo's inventory
-- database; its tables with REPLICA IDENTITY FULL, which Flink's
-- debezium-json format needs for the before images of updates and
-- deletes). Reads the orders and customers topics from the start up to
-- their latest offsets (then the job ends), and
--   1. writes orders and quantity per customer last name to the
--      upsert-kafka topic flink.order_totals (key {"last_name"}),
--   2. copies the customers table exactly once (a Kafka transaction per
--      checkpoint) to flink.customers as debezium-json,
--   3. prints the totals (the SELECT's final result).
-- Run: BOOTSTRAP=127.0.0.1:9092 scripts/flink.sh sql 1.20 examples/flink/order_totals.sql
-- It equals, in PostgreSQL:
--   SELECT c.last_name, count(*), sum(o.quantity) FROM inventory.orders o
--   JOIN inventory.customers c ON o.purchaser = c.id GROUP BY c.last_name;
SET 'execution.checkpointing.interval' = '2s';

CREATE TABLE orders (
  id INT, order_date INT, purchaser INT, quantity INT, product_id INT
) WITH (
  'connector' = 'kafka',
  'topic' = 'dbserver1.inventory.orders',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'properties.group.id' = 'flink-order-totals',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json',
  'debezium-json.schema-include' = 'true'
);

CREATE TABLE customers (
  id INT, first_name STRING, last_name STRING, email STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'dbserver1.inventory.customers',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'properties.group.id' = 'flink-order-totals',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json',
  'debezium-json.schema-include' = 'true'
);

CREATE TABLE order_totals (
  last_name STRING, orders BIGINT, quantity INT,
  PRIMARY KEY (last_name) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'flink.order_totals',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE customers_copy (
  id INT, first_name STRING, last_name STRING, email STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'flink.customers',
  'properties.bootstrap.servers' = '${BOOTSTRAP}',
  'properties.transaction.timeout.ms' = '600000',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'flink-customers',
  'format' = 'debezium-json'
);

INSERT INTO order_totals
SELECT c.last_name, COUNT(*), SUM(o.quantity)
FROM orders o JOIN customers c ON o.purchaser = c.id
GROUP BY c.last_name;

INSERT INTO customers_copy SELECT * FROM customers;

SELECT c.last_name, COUNT(*), SUM(o.quantity)
FROM orders o JOIN customers c ON o.purchaser = c.id
GROUP BY c.last_name;
