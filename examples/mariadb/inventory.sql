-- The MariaDB "inventory" database for docker-compose.yml (run by the
-- image's entrypoint from /docker-entrypoint-initdb.d): a user with the
-- privileges Debezium's MariaDB connector documents (SELECT, RELOAD, SHOW
-- DATABASES, REPLICATION SLAVE, REPLICATION CLIENT) and two seeded tables.
CREATE USER IF NOT EXISTS 'connectd'@'%' IDENTIFIED BY 'connectd';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR ON *.* TO 'connectd'@'%';
GRANT ALL ON inventory.* TO 'connectd'@'%';
CREATE TABLE inventory.customers (
  id int AUTO_INCREMENT PRIMARY KEY,
  first_name varchar(255) NOT NULL,
  last_name varchar(255) NOT NULL,
  email varchar(255) NOT NULL UNIQUE
);
CREATE TABLE inventory.products (
  id int AUTO_INCREMENT PRIMARY KEY,
  name varchar(255) NOT NULL,
  description varchar(512),
  weight double
);
INSERT INTO inventory.customers (first_name, last_name, email) VALUES
  ('Sally', 'Thomas', 'sally.thomas@acme.com'),
  ('George', 'Bailey', 'gbailey@foobar.com'),
  ('Edward', 'Walker', 'ed@walker.com'),
  ('Anne', 'Kretchmar', 'annek@noanswer.org');
INSERT INTO inventory.products (name, description, weight) VALUES
  ('scooter', 'Small 2-wheel scooter', 3.14),
  ('car battery', '12V car battery', 8.1);
