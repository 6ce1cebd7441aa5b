-- Test peer scenario "mariadb types": the type matrix of mariadb_inventory.sql (all_types) plus
-- edge_types (zero dates, latin1 text, spatial values), loaded into database `types` by
-- run-mariadb-types.sh and by connectd's TestTypesGolden; captured once per handling mode
-- (scenarios/mariadb_types/<mode>.properties).
SET SESSION sql_mode = '';
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

-- Zero dates (sql_mode without NO_ZERO_DATE), latin1 columns, spatial values. Row 1: zero dates,
-- row 2: ordinary values, row 3: NULLs where allowed.
CREATE TABLE edge_types (
  id INT NOT NULL PRIMARY KEY,
  d_zero DATE,
  d_zero_nn DATE NOT NULL,
  dt_zero DATETIME,
  dt_zero_nn DATETIME NOT NULL,
  ts_zero TIMESTAMP NULL,
  ts_zero_nn TIMESTAMP NOT NULL DEFAULT '0000-00-00 00:00:00',
  l_char CHAR(6) CHARACTER SET latin1,
  l_varchar VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci,
  l_text TEXT CHARACTER SET latin1,
  g_geometry GEOMETRY,
  g_point POINT,
  g_linestring LINESTRING,
  g_polygon POLYGON
) DEFAULT CHARSET = utf8mb4;
INSERT INTO edge_types VALUES
  (1, '0000-00-00', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
   '0000-00-00 00:00:00', 'café', 'Ärger über Öl', 'naïve façade ÿ', ST_GeomFromText('POINT(1 2)'),
   ST_GeomFromText('POINT(3.5 -4.25)'), ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'),
   ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))')),
  (2, '2024-02-29', '1970-01-01', '2024-02-29 13:14:15', '1970-01-01 00:00:00', '2024-02-29 13:14:15',
   '1970-01-01 00:00:01', '', 'plain ascii', '', ST_GeomFromText('POLYGON((0 0, 1 0, 1 1, 0 0))'),
   ST_GeomFromText('POINT(0 0)'), ST_GeomFromText('LINESTRING(-1 -1, 1 1)'),
   ST_GeomFromText('POLYGON((0 0, 1 0, 0 1, 0 0))')),
  (3, NULL, '2000-01-01', NULL, '2000-01-01 00:00:00', NULL, '2000-01-01 00:00:00', NULL, NULL, NULL, NULL, NULL,
   NULL, NULL);
