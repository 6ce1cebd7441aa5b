INSERT INTO s1.alpha VALUES (2, 'b', 'hidden too');
INSERT INTO s1.skipped VALUES (2, 't');
INSERT INTO s1.m1 VALUES (2, 'm1b');
