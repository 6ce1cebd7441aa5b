INSERT INTO s1."Größe" VALUES (2, 'd');
INSERT INTO s1."my table" VALUES (2, 'e');
