-- identifiers Kafka refuses in a topic name (non-ASCII letters, a space, a
-- 4-byte character) and in Avro/Connect schema names
CREATE SCHEMA s1;
CREATE TABLE s1."Größe" (id int PRIMARY KEY, "Wert ü" text);
CREATE TABLE s1."my table" (id int PRIMARY KEY, v text);
CREATE TABLE s1."emoji😀x" (id int PRIMARY KEY, v text);
INSERT INTO s1."Größe" VALUES (1, 'a');
INSERT INTO s1."my table" VALUES (1, 'b');
INSERT INTO s1."emoji😀x" VALUES (1, 'c');
