-- table.include.list entries in another case than the catalog, in a
-- non-alphabetical order, one regex entry matching several tables
CREATE SCHEMA s1;
CREATE TABLE s1.zeta (id int PRIMARY KEY, v text);
CREATE TABLE s1.alpha (id int PRIMARY KEY, v text, secret text);
CREATE TABLE s1.m2 (id int PRIMARY KEY, v text);
CREATE TABLE s1.m1 (id int PRIMARY KEY, v text);
CREATE TABLE s1.skipped (id int PRIMARY KEY, v text);
INSERT INTO s1.zeta VALUES (1, 'z');
INSERT INTO s1.alpha VALUES (1, 'a', 'hidden');
INSERT INTO s1.m2 VALUES (1, 'm2');
INSERT INTO s1.m1 VALUES (1, 'm1');
INSERT INTO s1.skipped VALUES (1, 's');
