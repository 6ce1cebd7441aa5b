-- Reference scenario "types": one table per family of PostgreSQL types, seeded BEFORE the
-- connector starts (captured by the snapshot); types_changes.sql then inserts a copy of every
-- row (id + 100) while the connector streams, so each value is captured once from the
-- snapshot (JDBC text) and once from pgoutput. Used by reference/debezium (run-pg-types.sh)
-- and by connectd's golden tests (connectors/postgres/types_golden_test.go).
-- Run against database "types" with psql -v ON_ERROR_STOP=1.

CREATE EXTENSION citext;
CREATE EXTENSION hstore;
CREATE EXTENSION ltree;
CREATE SCHEMA types;
CREATE TYPE types.mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN types.posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN types.short_text AS varchar(10);
CREATE DOMAIN types.price AS numeric(8,2);

-- integers, floats, numerics, money, oid
CREATE TABLE types.num (
  id integer PRIMARY KEY,
  c_int2 smallint,
  c_int4 integer,
  c_int8 bigint,
  c_real real,
  c_double double precision,
  c_numeric numeric(10,3),
  c_numeric0 numeric(5),
  c_numvar numeric,
  c_money money,
  c_oid oid
);
INSERT INTO types.num VALUES
  (1, 1, 2, 3, 1.5, 2.25, 12345.678, 12345, 3.14159, 12.34, 42),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, -32768, -2147483648, -9223372036854775808, -3.4e38, 1e-300, -0.001, -99999, 123456789012345678901234567890.123456789, -92233720368547758.08, 4294967295),
  (4, 0, 0, 0, 0, -0.0, 0, 0, 0.000, 0, 0),
  (5, 32767, 2147483647, 9223372036854775807, 1e-7, 1e7, 9999999.999, 1, 1e20, 92233720368547758.07, 1);

-- special values: NaN and +-Infinity
CREATE TABLE types.num_special (
  id integer PRIMARY KEY,
  c_real real,
  c_double double precision,
  c_numeric numeric(10,3),
  c_numvar numeric
);
INSERT INTO types.num_special VALUES
  (1, 'NaN', 'NaN', 'NaN', 'NaN'),
  (2, 'Infinity', 'Infinity', 1, 'Infinity'),
  (3, '-Infinity', '-Infinity', 2, '-Infinity');

-- character types, boolean, uuid, json, xml, enum, domains
CREATE TABLE types.str (
  id integer PRIMARY KEY,
  c_char char(5),
  c_varchar varchar(20),
  c_text text,
  c_name name,
  c_char1 "char",
  c_bool boolean,
  c_uuid uuid,
  c_json json,
  c_jsonb jsonb,
  c_xml xml,
  c_enum types.mood,
  c_dom_int types.posint,
  c_dom_text types.short_text,
  c_dom_num types.price
);
INSERT INTO types.str VALUES
  (1, 'ab', 'varchar', 'text', 'a_name', 'x', true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": 2, "a": [1]}', '{"b": 2, "a": [1]}', '<a><b>x &amp; y</b></a>', 'happy', 5, 'dom', 12.5),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, '', '', '', '', '', false, '00000000-0000-0000-0000-000000000000', 'null', '[]', '', 'sad', 1, '', -0.5);

-- binary and bit strings
CREATE TABLE types.bin (
  id integer PRIMARY KEY,
  c_bytea bytea,
  c_bit1 bit(1),
  c_bit8 bit(8),
  c_bit12 bit(12),
  c_varbit varbit(16),
  c_varbit_any varbit
);
INSERT INTO types.bin VALUES
  (1, '\x00ff10', B'1', B'10100011', B'101000110001', B'101', B'1010101010101010101'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, '\x', B'0', B'00000001', B'000000000000', B'', B'1'),
  (4, '\xfbff', B'1', B'11111111', B'111111111111', B'1111111111111111', B'11111111111111111111111111111111111111111');

-- date and time
CREATE TABLE types.tm (
  id integer PRIMARY KEY,
  c_date date,
  c_time time,
  c_time0 time(0),
  c_time3 time(3),
  c_timetz timetz,
  c_timetz3 timetz(3),
  c_ts0 timestamp(0),
  c_ts3 timestamp(3),
  c_ts timestamp,
  c_tstz0 timestamptz(0),
  c_tstz3 timestamptz(3),
  c_tstz timestamptz,
  c_interval interval,
  c_interval_ym interval year to month
);
INSERT INTO types.tm VALUES
  (1, '2024-02-29', '13:14:15.123456', '13:14:15', '13:14:15.123', '13:14:15.123456+05:30', '13:14:15.123-08',
      '2024-02-29 13:14:15', '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.123456',
      '2024-02-29 13:14:15+05:30', '2024-02-29 13:14:15.123+05:30', '2024-02-29 13:14:15.123456+05:30',
      '1 year 2 months 3 days 04:05:06.789', '3 years 1 month'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, '1969-12-31', '00:00:00', '23:59:59', '24:00:00', '00:00:00+00', '23:59:59.999-12:45',
      '1969-12-31 23:59:59', '1969-12-31 23:59:59.999', '1969-12-31 23:59:59.999999',
      '1900-01-01 00:00:00+00', '1970-01-01 00:00:00.001+00', '1969-12-31 23:59:59.999999+00',
      '-1 days -02:00:00.5', '-1 year'),
  (4, '1970-01-01', '12:00:00.000001', '00:00:01', '00:00:00.001', '12:00:00-01', '12:00:00+14',
      '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00',
      '1970-01-01 00:00:00+00', '1970-01-01 00:00:00+00', '1970-01-01 00:00:00+00',
      '0', '0');

-- BC dates and years above 9999
CREATE TABLE types.tm_extreme (
  id integer PRIMARY KEY,
  c_date date,
  c_ts timestamp,
  c_ts3 timestamp(3),
  c_tstz timestamptz
);
INSERT INTO types.tm_extreme VALUES
  (1, '0044-03-15 BC', '0001-01-01 00:00:00 BC', '0044-03-15 12:00:00.123 BC', '0100-06-15 12:00:00+00 BC'),
  (2, '0001-01-01', '0001-01-01 00:00:00', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00'),
  (3, '12345-06-07', '10000-01-01 00:00:00', '12345-06-07 08:09:10.111', '99999-12-31 23:59:59.999999+00');

-- +-infinity
CREATE TABLE types.tm_inf (
  id integer PRIMARY KEY,
  c_date date,
  c_ts timestamp,
  c_tstz timestamptz
);
INSERT INTO types.tm_inf VALUES
  (1, 'infinity', 'infinity', 'infinity'),
  (2, '-infinity', '-infinity', '-infinity');

-- network addresses
CREATE TABLE types.net (
  id integer PRIMARY KEY,
  c_inet inet,
  c_cidr cidr,
  c_macaddr macaddr,
  c_macaddr8 macaddr8
);
INSERT INTO types.net VALUES
  (1, '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05'),
  (2, NULL, NULL, NULL, NULL),
  (3, '::1', '2001:db8::/32', 'FF-FF-FF-FF-FF-FF', '08002b0102030405');

-- geometric types
CREATE TABLE types.geo (
  id integer PRIMARY KEY,
  c_point point,
  c_line line,
  c_lseg lseg,
  c_box box,
  c_path path,
  c_polygon polygon,
  c_circle circle
);
INSERT INTO types.geo VALUES
  (1, '(1.5,-2.25)', '{1,2,3}', '[(0,0),(1,1)]', '(1,1),(0,0)', '[(0,0),(1,1),(2,0)]', '((0,0),(1,1),(1,0))', '<(1,2),3>'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, '(0,0)', '{0,1,-0.5}', '[(-1,-1),(1e10,2.5)]', '(0,0),(0,0)', '((0,0),(1,1))', '((0,0))', '<(0,0),0.5>');

-- extension types: citext, ltree, hstore
CREATE TABLE types.ext (
  id integer PRIMARY KEY,
  c_citext citext,
  c_ltree ltree,
  c_hstore hstore
);
INSERT INTO types.ext VALUES
  (1, 'CiText', 'Top.Science.Astronomy', '"a"=>"1", "b"=>NULL, "c d"=>"x\"y", "z"=>""'),
  (2, NULL, NULL, NULL),
  (3, '', '', ''),
  (4, 'x', 'a', 'key=>value');

-- range types
CREATE TABLE types.rng (
  id integer PRIMARY KEY,
  c_int4range int4range,
  c_int8range int8range,
  c_numrange numrange,
  c_tsrange tsrange,
  c_tstzrange tstzrange,
  c_daterange daterange
);
INSERT INTO types.rng VALUES
  (1, '[1,10)', '[1,100]', '(1.5,2.5]', '[2024-01-01 00:00,2024-02-01 12:00:00.5)', '[2024-01-01 00:00+02,)', '[2024-01-01,2024-02-01)'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, 'empty', '(,5)', '(,)', 'empty', '(,"2024-01-01 00:00+00"]', '[2024-01-01,infinity)');

-- arrays
CREATE TABLE types.arr (
  id integer PRIMARY KEY,
  c_int2 smallint[],
  c_int4 integer[],
  c_int8 bigint[],
  c_real real[],
  c_double double precision[],
  c_numeric numeric(6,2)[],
  c_numvar numeric[],
  c_bool boolean[],
  c_text text[],
  c_varchar varchar(5)[],
  c_char char(2)[],
  c_uuid uuid[],
  c_date date[],
  c_ts timestamp[],
  c_tstz timestamptz[],
  c_enum types.mood[],
  c_jsonb jsonb[],
  c_bytea bytea[],
  c_inet inet[],
  c_citext citext[]
);
INSERT INTO types.arr VALUES
  (1, '{1,-2}', '{1,2,NULL,4}', '{9223372036854775807}', '{1.5,-0.25}', '{3.14,1e300}', '{1.5,-2.25}', '{1.5,100,0.001}',
      '{t,f,NULL}', '{"a","b c","d,e","\"q\"",NULL,"NULL"}', '{ab,cde}', '{a,bc}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
      '{2024-01-01,1970-01-02}', '{"2024-02-29 13:14:15.123456"}', '{"2024-02-29 13:14:15.123456+05:30"}', '{sad,happy}',
      ARRAY['{"a": 1}'::jsonb, '[1, "x"]'::jsonb], '{"\\x00ff","\\x"}', '{192.168.0.1,::1/128}', '{Ab,cD}'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}');

-- text search, lsn and other built-ins
CREATE TABLE types.misc (
  id integer PRIMARY KEY,
  c_tsvector tsvector,
  c_tsquery tsquery,
  c_pg_lsn pg_lsn,
  c_int2vector int2vector,
  c_regclass regclass,
  c_xid xid
);
INSERT INTO types.misc VALUES
  (1, 'a fat cat sat', 'fat & (cat | rat)', '16/B374D848', '1 2 3', 'types.num', '12345'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL);
