-- Test peer scenario "mariadb ddl": DDL while streaming (schema change events, schema
-- history, events decoded with the columns current when they were written).
INSERT INTO products (name, description, weight) VALUES ('saw', 'hand saw', 0.9);
ALTER TABLE products ADD COLUMN color varchar(20) NOT NULL DEFAULT 'red' AFTER name;
INSERT INTO products (name, color, description, weight) VALUES ('drill', 'blue', 'cordless drill', 2.1);
ALTER TABLE products DROP COLUMN weight;
UPDATE products SET color = 'green' WHERE name = 'saw';
CREATE TABLE tags (id int PRIMARY KEY, label varchar(30) DEFAULT 'none' COMMENT 'shown to users');
INSERT INTO tags VALUES (1, 'new');
