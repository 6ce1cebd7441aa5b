-- Test peer scenario "mariadb fidelity" (issue 17), run while streaming: statements that are not
-- about tables' columns (must never stop capture), a table created with BOOLEAN columns, 00xx
-- years, a primary-key change.
DELIMITER //
CREATE PROCEDURE p1(IN x INT) BEGIN DECLARE y INT; SET y = x + 1; SELECT y; END//
CREATE FUNCTION f1(x INT) RETURNS INT DETERMINISTIC BEGIN RETURN x * 2; END//
CREATE TRIGGER trg1 BEFORE INSERT ON snap_cs FOR EACH ROW BEGIN IF NEW.flag IS NULL THEN SET NEW.flag = 0; END IF; END//
CREATE EVENT ev1 ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM snap_cs WHERE id < 0; END//
DELIMITER ;
DROP PROCEDURE p1;
DROP FUNCTION f1;
DROP TRIGGER trg1;
DROP EVENT ev1;
REPAIR TABLE snap_cs;
OPTIMIZE TABLE snap_cs;
ANALYZE TABLE snap_cs;
CREATE VIEW v1 AS SELECT id FROM snap_cs;
DROP VIEW v1;
CREATE USER 'u1'@'%' IDENTIFIED BY 'x';
GRANT SELECT ON inventory.* TO 'u1'@'%';
REVOKE SELECT ON inventory.* FROM 'u1'@'%';
DROP USER 'u1'@'%';
CREATE TABLE booly (id int PRIMARY KEY, flag BOOLEAN, t1 tinyint(1) unsigned, t2 tinyint, d date, dt datetime(3));
INSERT INTO booly VALUES (1, true, 1, 5, '0018-04-01', '0018-04-01 10:11:12.123'), (2, false, 0, -5, '0099-12-31', '0070-01-01 00:00:00');
INSERT INTO snap_cs VALUES (2, 'héllo', 'héllo', X'01', 0, '0070-01-01', '2018-04-01 00:00:00');
UPDATE snap_cs SET id = 3 WHERE id = 2;
