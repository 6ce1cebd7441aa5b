-- Scenario "transactions": provide.transaction.metadata=true (BEGIN/END events on
-- <topic.prefix>.transaction, the envelope's transaction block), with an excluded table.
CREATE TABLE a (id integer PRIMARY KEY, v text);
CREATE TABLE b (id integer PRIMARY KEY, v text);
CREATE TABLE skip (id integer PRIMARY KEY);
INSERT INTO a VALUES (1, 'a1');
