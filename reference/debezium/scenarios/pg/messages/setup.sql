-- Scenario "messages": logical decoding messages (pg_logical_emit_message), transactional
-- and not, filtered by message.prefix.exclude.list.
CREATE TABLE ta (id integer PRIMARY KEY, v text);
INSERT INTO ta VALUES (1, 'a1');
