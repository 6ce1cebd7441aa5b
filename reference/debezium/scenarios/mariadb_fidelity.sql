-- Test peer scenario "mariadb fidelity" (issue 17): loaded before the snapshot on a server whose
-- character_set_server is latin1 (SERVER_CHARSET=latin1): columns in their own charsets, a
-- TINYINT(1), two-digit and 00xx years (enable.time.adjuster).
CREATE TABLE snap_cs (
  id int PRIMARY KEY,
  u varchar(20) CHARACTER SET utf8mb4,
  l varchar(20) CHARACTER SET latin1,
  b varbinary(10),
  flag tinyint(1),
  d date,
  dt datetime
);
INSERT INTO snap_cs VALUES (1, 'héllo ☃', 'héllo', X'00FF', 1, '0018-04-01', '0069-12-31 23:59:59');
