-- Changes of scenario "heartbeat". Never reached in the capture: Debezium emits a heartbeat
-- every second from the end of the snapshot on, so the engine is never quiet for the 3 s
-- the hook waits for; run with MAX=10 (the capture stops after 10 records).
INSERT INTO t VALUES (2, 'a2');
