-- Changes of scenario "defaults_modes".
INSERT INTO s1.d (id, u1, dt, tm3, ts, tstz, tstz0, nnts) VALUES (2, 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '2020-02-02', '01:02:03.456', '2021-01-01 00:00:00', '2022-01-01 00:00:00+00', '2023-01-01 00:00:00+00', '2024-01-01 00:00:00+00');
INSERT INTO s1.d (id, i2, i2expr, i4expr, i4cast, i4neg, i8, r, rnan, d8, d8tiny, n103, n103neg, n124, n124b, n51, n5, nvar, nbig, b, bf,
  c5, vc, t1, t2, t3, t4, t5, t6, t7, t8, qc, u1, u2, j, js, x, by, b1, b8, vb, dt, dt2, tm, tm3, tm24, tz, ts, ts2, tstz, tstz3, tstz0,
  iv, iv2, mo, ip, ci, rg, pt, o, arr, arr2, arr3, m1, m2, m3, dom, domn, nnts)
VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2024-01-01 00:00:00+00');
DELETE FROM s1.d WHERE id = 2;
DELETE FROM s1.p WHERE id = 1;
