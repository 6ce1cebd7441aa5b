-- Changes of scenario "messages".
SELECT pg_logical_emit_message(true, 'pfx', 'hello');
SELECT pg_logical_emit_message(false, 'nontx', 'world');
SELECT pg_logical_emit_message(true, 'skip.me', 'x');
BEGIN;
INSERT INTO ta VALUES (2, 'a2');
SELECT pg_logical_emit_message(true, 'pfx', convert_to('bytes é', 'UTF8'));
COMMIT;
