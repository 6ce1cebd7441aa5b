#!/usr/bin/env python3
"""Reads connectd's Avro topics with a consumer that is not ours.

Confluent's Python client (confluent-kafka) with its AvroDeserializer and
SchemaRegistryClient, pointed at connectd's embedded broker and schema
registry, decodes keys and values of every record of the given topics and
prints one JSON line per record:
  {"topic","offset","key_schema_id","value_schema_id","key","value"}
bytes are printed as base64, decimals as strings.

usage: avro_consume.py BOOTSTRAP REGISTRY_URL COUNT TIMEOUT_S TOPIC...
"""
import base64
import decimal
import json
import struct
import sys
import time

from confluent_kafka import Consumer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext


def plain(v):
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def schema_id(raw):
    if raw is None:
        return None
    magic, sid = struct.unpack(">bI", raw[:5])
    assert magic == 0, "magic byte %d" % magic
    return sid


def main():
    bootstrap, registry, count, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    topics = sys.argv[5:]
    client = SchemaRegistryClient({"url": registry})
    deser = AvroDeserializer(client)
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "avro-consume-%d" % time.time_ns(),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe(topics)
    seen = 0
    deadline = time.time() + timeout
    while seen < count and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            print("consumer error: %s" % msg.error(), file=sys.stderr)
            continue
        key = deser(msg.key(), SerializationContext(msg.topic(), MessageField.KEY)) if msg.key() is not None else None
        value = deser(msg.value(), SerializationContext(msg.topic(), MessageField.VALUE)) if msg.value() is not None else None
        print(json.dumps({
            "topic": msg.topic(), "offset": msg.offset(),
            "key_schema_id": schema_id(msg.key()), "value_schema_id": schema_id(msg.value()),
            "key": plain(key), "value": plain(value),
        }, sort_keys=True), flush=True)
        seen += 1
    consumer.close()
    if seen < count:
        print("read %d of %d records within %ss" % (seen, count, timeout), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
