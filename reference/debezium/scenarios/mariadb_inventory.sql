-- Test peer scenario "mariadb inventory": schema + seed rows, captured by the snapshot.
-- Loaded into database `inventory` by run-mariadb-inventory.sh and by connectd's golden test.
CREATE TABLE customers (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  first_name VARCHAR(255) NOT NULL,
  last_name VARCHAR(255) NOT NULL,
  email VARCHAR(255) NOT NULL UNIQUE
) AUTO_INCREMENT = 1001;
INSERT INTO customers (first_name, last_name, email) VALUES
  ('Sally', 'Thomas', 'sally.thomas@acme.com'),
  ('George', 'Bailey', 'gbailey@foobar.com'),
  ('Edward', 'Walker', 'ed@walker.com');

CREATE TABLE products (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  description VARCHAR(512),
  weight FLOAT
) AUTO_INCREMENT = 101;
INSERT INTO products (name, description, weight) VALUES
  ('scooter', 'Small 2-wheel scooter', 3.14),
  ('car battery', '12V car battery', 8.1);

CREATE TABLE orders (
  order_number INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  order_date DATE NOT NULL,
  purchaser INT NOT NULL,
  quantity INT NOT NULL,
  product_id INT NOT NULL,
  FOREIGN KEY (purchaser) REFERENCES customers(id),
  FOREIGN KEY (product_id) REFERENCES products(id)
) AUTO_INCREMENT = 10001;
INSERT INTO orders (order_date, purchaser, quantity, product_id) VALUES
  ('2016-01-16', 1001, 1, 102),
  ('2016-01-17', 1002, 2, 101);

-- The first type matrix (Debezium's default handling modes). Row 1: values, row 2: extremes,
-- row 3: NULLs.
CREATE TABLE all_types (
  id INT NOT NULL PRIMARY KEY,
  c_tinyint TINYINT,
  c_tinyint_u TINYINT UNSIGNED,
  c_smallint SMALLINT,
  c_smallint_u SMALLINT UNSIGNED,
  c_mediumint MEDIUMINT,
  c_mediumint_u MEDIUMINT UNSIGNED,
  c_int INT,
  c_int_u INT UNSIGNED,
  c_bigint BIGINT,
  c_bigint_u BIGINT UNSIGNED,
  c_decimal DECIMAL(10,3),
  c_decimal_big DECIMAL(65,30),
  c_float FLOAT,
  c_double DOUBLE,
  c_char CHAR(5),
  c_varchar VARCHAR(20),
  c_text TEXT,
  c_date DATE,
  c_datetime DATETIME,
  c_datetime3 DATETIME(3),
  c_datetime6 DATETIME(6),
  c_timestamp TIMESTAMP NULL,
  c_timestamp6 TIMESTAMP(6) NULL,
  c_time TIME,
  c_time6 TIME(6),
  c_year YEAR,
  c_enum ENUM('small','medium','large'),
  c_set SET('a','b','c'),
  c_bit1 BIT(1),
  c_bit12 BIT(12),
  c_json JSON,
  c_blob BLOB,
  c_binary BINARY(4),
  c_varbinary VARBINARY(8),
  c_notnull INT NOT NULL DEFAULT 7
) DEFAULT CHARSET = utf8mb4;
INSERT INTO all_types VALUES
  (1, -5, 200, -300, 60000, -8000000, 16000000, -2000000000, 4000000000, -9000000000000000000, 18000000000000000000,
   12345.678, 12345678901234567890.123456789012345678901234567890, 1.5, -2.718281828459045,
   'ab', 'héllo wörld', 'emoji 😀 and "quotes" \\ <tag>', '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.123',
   '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15', '2024-02-29 13:14:15.654321', '13:14:15', '-838:59:59.000000',
   2024, 'medium', 'a,c', b'1', b'101000000011', '{"b": 2, "a": [1, 2.5, null]}', X'00FF10', X'DEADBEEF', X'0102', 7),
  (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615,
   -0.001, -99999999999999999999999999999999999.999999999999999999999999999999, -0.25, 1e300,
   '', '', '', '1970-01-01', '1000-01-01 00:00:00', '9999-12-31 23:59:59.999', '1969-12-31 23:59:59.999999',
   '1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', '00:00:00', '838:59:59.000000',
   1901, 'small', '', b'0', b'000000000001', '[]', X'', X'00000000', X'', 0),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 8);
