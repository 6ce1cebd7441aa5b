-- Scenario "values": value formats at the edges, each row once in the snapshot (setup.sql) and
-- once streamed (changes.sql): doubles and floats printed as Java 17's Double/Float.toString,
-- unconstrained numeric (VariableScaleDecimal without trailing zeros), intervals beyond the
-- int64 range of microseconds (clamped), array types Debezium leaves out (interval[], money[],
-- xml[], point[], varbit[]), NULL elements in numeric[], column.truncate.to.N.chars and
-- characters beyond the BMP. (BC dates, 24:00:00 in a time[], NULL in an enum[] and a cut
-- through a surrogate pair are deviations: internal/difftest/pgdiff/deviations.go.)
CREATE SCHEMA s1;
CREATE TYPE s1.mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE s1.v (
  id integer PRIMARY KEY,
  d8 double precision,
  f4 real,
  d8a double precision[],
  f4a real[],
  n numeric,
  na numeric[],
  n2a numeric(6,2)[],
  iv interval,
  iva interval[],
  moa money[],
  xa xml[],
  pa point[],
  vba varbit[],
  tma time[],
  ea s1.mood[],
  dt date,
  dta date[],
  tr text
);
CREATE TABLE s1.doubles (id integer PRIMARY KEY, d8 double precision, f4 real);
INSERT INTO s1.doubles SELECT i, x.d, x.f FROM (VALUES
  (1, 4.9e-324::float8, 1.4e-45::float4), (2, 1e7, 1e7), (3, 1e-3, 1e-3), (4, 0.001, 0.001), (5, 100.0, 100.0),
  (6, 2.2250738585072014e-308, 1.17549435e-38), (7, 1.7976931348623157e308, 3.4028235e38), (8, 0.1, 0.1), (9, 1e23, 1e23),
  (10, 2e-3, 2e-3), (11, 123456789.125, 1234567.1), (12, -0.0, -0.0), (13, 9999999.999999998, 9999999), (14, 1e-4, 1e-4),
  (15, 1.2345678901234567e-5, 1.2345678e-5), (16, 8.41e21, 8.41e21), (17, 5e-324, 3e-45), (18, 2.0/3, 2.0/3),
  (19, 9.007199254740993e15, 16777217), (20, 1e22, 1e10)) AS x(i, d, f);
INSERT INTO s1.v VALUES
  (1, 4.9e-324, 1.4e-45, '{4.9e-324,1e7,0.001,100,NULL}', '{1.4e-45,1e7,0.001,3.4028235e38,NULL}', 10.10, '{1.5,NULL,2}', '{1.50,NULL}',
   '178000000 years', '{"1 day",NULL}', '{1.23,NULL}', ARRAY['<a/>'::xml], '{"(1,2)"}', '{101}', '{13:14:15,NULL}', '{sad,ok}',
   '0044-03-15', '{0044-03-15,2020-01-01,NULL}', 'emoji 😀 𝄞 tail'),
  (2, 1e23, 0.1, NULL, NULL, 100, '{1,2}', NULL, '-178000000 years', NULL, NULL, NULL, NULL, NULL, '{00:00:00}', '{happy}',
   '1970-01-01', NULL, 'abcdef😀gh'),
  (3, 2e-3, 1e-4, NULL, NULL, 0.000, NULL, NULL, '1 year 2 mons 3 days 04:05:06.789', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   '2024-02-29', NULL, '😀😀😀😀'),
  (4, -0.0, -0.0, NULL, NULL, 1e20, NULL, NULL, '-1 days -02:00:00.5', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'plain text'),
  (5, 123456789.125, 1234567.1, NULL, NULL, 3.14159000, NULL, NULL, '1000 years 00:00:00.000001', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (6, 1.7976931348623157e308, 3.4028235e38, NULL, NULL, -0.5, NULL, NULL, '290000 years 1 day', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (7, 0.1, 1e7, NULL, NULL, 123456789012345678901234567890.123456789000, NULL, NULL, '00:00:00.000001', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
