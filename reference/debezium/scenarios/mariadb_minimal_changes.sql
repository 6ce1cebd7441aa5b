-- Test peer scenario "mariadb minimal row image" (issue 17): a session with binlog_row_image=MINIMAL
-- updates a row (the before image holds only the key, the after image only the changed column).
SET SESSION binlog_row_image = MINIMAL;
UPDATE snap_cs SET u = 'minimal' WHERE id = 1;
SET SESSION binlog_row_image = FULL;
INSERT INTO snap_cs (id, u) VALUES (9, 'after');
