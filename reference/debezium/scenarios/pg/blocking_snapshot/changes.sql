-- Changes of scenario "blocking_snapshot": the signal (source channel), then a change.
INSERT INTO debezium_signal VALUES ('blocking-1', 'execute-snapshot', '{"data-collections": ["public.t", "public.u"], "type": "blocking", "additional-conditions": [{"data-collection": "public.t", "filter": "SELECT * FROM public.t WHERE id > 1"}]}');
SELECT pg_sleep(3);
INSERT INTO t VALUES (10, 'after');
