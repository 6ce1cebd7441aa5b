-- Scenario "two_phase": prepared transactions (PREPARE TRANSACTION) committed
-- and rolled back, with autocommit changes while one is prepared. pgoutput
-- without the slot's two_phase option decodes a prepared transaction at
-- COMMIT PREPARED; a rolled-back one is never sent.
CREATE TABLE acct (id integer PRIMARY KEY, bal integer, note text);
CREATE TABLE log (id integer PRIMARY KEY, msg text);
INSERT INTO acct VALUES (1, 100, 'a'), (2, 200, 'b');
