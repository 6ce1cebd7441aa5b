"""The same client operations with a non-Java client, printed so that the
embedded broker's answers can be compared with a real Kafka's
(integration/python_clients_test.go):

    python3 python_clients.py confluent|kafka-python BOOTSTRAP TOPIC

confluent = confluent-kafka (librdkafka), kafka-python = the pure-Python
client. Admin: create a topic (3 partitions, a config), describe its
configs; an idempotent producer (10 keyed records); a transactional
producer (one committed, one aborted transaction); a group consumer that
reads committed records from the start and commits; list and describe the
group and its offsets; delete the group and the topic."""
import sys
import time

client, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
group = topic + "-group"
out = []


def say(*a):
    out.append(" ".join(str(x) for x in a))


def confluent():
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for t, f in admin.create_topics([NewTopic(topic, 3, 1, config={"cleanup.policy": "compact", "retention.ms": "86400000"})]).items():
        f.result()
        say("created", t)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    cfg = admin.describe_configs([res])[res].result()
    say("config cleanup.policy", cfg["cleanup.policy"].value, "retention.ms", cfg["retention.ms"].value)
    md = admin.list_topics(topic, timeout=10).topics[topic]
    say("partitions", len(md.partitions))
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(10):
        p.produce(topic, key=f"k{i}", value=f"v{i}")
    say("unflushed", p.flush(30))
    tp = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic + "-tx"})
    tp.init_transactions(30)
    tp.begin_transaction()
    tp.produce(topic, key="t1", value="committed")
    tp.commit_transaction(30)
    tp.begin_transaction()
    tp.produce(topic, key="t2", value="aborted")
    tp.flush(30)
    tp.abort_transaction(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.subscribe([topic])
    got, deadline = set(), time.time() + 60
    while len(got) < 11 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.add(f"{m.key().decode()}={m.value().decode()}")
    # Caught up: the position of every partition at its end (past the
    # aborted record and the transaction markers, which a read_committed
    # consumer passes once it has fetched them), so that the committed
    # offsets do not depend on how the last fetches fell.
    while time.time() < deadline:
        parts = c.position(c.assignment())
        if parts and all(p.offset >= c.get_watermark_offsets(p, cached=False)[1] for p in parts):
            break
        c.poll(0.2)
    c.commit(asynchronous=False)
    c.close()
    say("consumed", sorted(got))
    groups = admin.list_consumer_groups().result()
    say("groups", sorted(g.group_id for g in groups.valid if g.group_id == group))
    d = admin.describe_consumer_groups([group])[group].result()
    say("group state", str(d.state).split(".")[-1], "members", len(d.members))
    offs = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result()
    say("committed", sorted((tp.partition, tp.offset) for tp in offs.topic_partitions))
    lo, hi = Consumer({"bootstrap.servers": bootstrap, "group.id": "wm"}).get_watermark_offsets(TopicPartition(topic, 0), 10)
    say("watermarks p0", lo, hi)
    for g, f in admin.delete_consumer_groups([group]).items():
        f.result()
        say("deleted group", g)
    for t, f in admin.delete_topics([topic]).items():
        f.result()
        say("deleted", t)


def kafka_python():
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 3, 1, topic_configs={"cleanup.policy": "compact", "retention.ms": "86400000"})])
    say("created", topic)
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    cfgs = next(iter(described.values()))[topic]

    def value(k):
        v = cfgs[k]
        return v.get("value", v.get("config_value")) if isinstance(v, dict) else v
    say("config cleanup.policy", value("cleanup.policy"), "retention.ms", value("retention.ms"))
    desc = admin.describe_topics([topic])
    say("partitions", len(desc[0]["partitions"]))
    p = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    for i in range(10):
        p.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode())
    p.flush(30)
    p.close()
    say("unflushed", 0)
    tp = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=topic + "-tx")
    tp.init_transactions()
    tp.begin_transaction()
    tp.send(topic, key=b"t1", value=b"committed")
    tp.commit_transaction()
    tp.begin_transaction()
    tp.send(topic, key=b"t2", value=b"aborted")
    tp.flush()
    tp.abort_transaction()
    tp.close()
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, isolation_level="read_committed")
    got, deadline = set(), time.time() + 60
    while len(got) < 11 and time.time() < deadline:
        for recs in c.poll(500).values():
            for m in recs:
                got.add(f"{m.key.decode()}={m.value.decode()}")
    while time.time() < deadline:  # caught up (see confluent)
        parts = list(c.assignment())
        ends = c.end_offsets(parts)
        if parts and all(c.position(p) >= ends[p] for p in parts):
            break
        c.poll(200)
    c.commit()
    c.close()
    say("consumed", sorted(got))
    say("groups", sorted(g["group_id"] for g in admin.list_groups() if g["group_id"] == group))
    d = admin.describe_groups([group])[group]
    say("group state", d["group_state"].upper(), "members", len(d["members"]))
    offs = admin.list_group_offsets({group: None})[group]
    say("committed", sorted((tp.partition, om.offset) for tp, om in offs.items()))
    wc = KafkaConsumer(bootstrap_servers=bootstrap)
    part = TopicPartition(topic, 0)
    say("watermarks p0", wc.beginning_offsets([part])[part], wc.end_offsets([part])[part])
    wc.close()
    admin.delete_groups([group])
    say("deleted group", group)
    admin.delete_topics([topic])
    say("deleted", topic)
    admin.close()


{"confluent": confluent, "kafka-python": kafka_python}[client]()
print("\n".join(out))
