-- Changes of scenario "incremental_snapshot": the signal (source channel).
INSERT INTO debezium_signal VALUES ('ad-hoc-1', 'execute-snapshot', '{"data-collections": ["public.t"], "type": "incremental", "additional-conditions": [{"data-collection": "public.t", "filter": "id <> 3"}]}');
