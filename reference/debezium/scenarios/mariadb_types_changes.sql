-- Test peer scenario "mariadb types": changes applied while streaming. Every row of both tables
-- once through the binlog (a copy with id + 100), then an update and a delete of a copy.
SET SESSION sql_mode = '';
INSERT INTO all_types SELECT id + 100, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u, c_mediumint, c_mediumint_u,
  c_int, c_int_u, c_bigint, c_bigint_u, c_decimal, c_decimal_big, c_float, c_double, c_char, c_varchar, c_text,
  c_date, c_datetime, c_datetime3, c_datetime6, c_timestamp, c_timestamp6, c_time, c_time6, c_year, c_enum, c_set,
  c_bit1, c_bit12, c_json, c_blob, c_binary, c_varbinary, c_notnull FROM all_types ORDER BY id;
INSERT INTO edge_types SELECT id + 100, d_zero, d_zero_nn, dt_zero, dt_zero_nn, ts_zero, ts_zero_nn, l_char, l_varchar,
  l_text, g_geometry, g_point, g_linestring, g_polygon, g_multipoint, g_collection, l_enum, c_cyr FROM edge_types ORDER BY id;
UPDATE edge_types SET l_varchar = 'ÅÄÖ åäö', g_point = ST_GeomFromText('POINT(10 20)', 4326), c_cyr = 'Ёж' WHERE id = 101;
DELETE FROM all_types WHERE id = 102;
