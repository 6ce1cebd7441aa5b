-- Changes of scenario "values": every snapshot row once more, streamed (ids + 100).
INSERT INTO s1.doubles SELECT id + 100, d8, f4 FROM s1.doubles WHERE id < 100;
INSERT INTO s1.v SELECT id + 100, d8, f4, d8a, f4a, n, na, n2a, iv, iva, moa, xa, pa, vba, tma, ea, dt, dta, tr FROM s1.v WHERE id < 100;
