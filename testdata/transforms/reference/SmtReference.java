// Test peer, never part of connectd: runs connectd's Debezium SMT golden
// cases through the real Debezium 3.6.1 classes and prints each output
// record in the layout of transforms/fixtures_test.go's render().
// Input: the cases file written by
//   CONNECTD_SMT_REFERENCE_DUMP=cases.jsonl go test -run TestDebeziumSMTsMatchReference ./transforms
// Run with run.sh (classpath from ~/.m2: debezium-*-3.6.1.Final, Kafka 4.3.0
// connect-api/connect-json/connect-transforms/kafka-clients, Jackson, SLF4J).
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.transforms.Transformation;

public class SmtReference {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        JsonConverter keyConv = new JsonConverter();
        keyConv.configure(Map.of("schemas.enable", "true", "decimal.format", "BASE64"), true);
        JsonConverter valConv = new JsonConverter();
        valConv.configure(Map.of("schemas.enable", "true", "decimal.format", "BASE64"), false);
        SimpleHeaderConverter hc = new SimpleHeaderConverter();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            JsonNode c = om.readTree(line);
            String name = c.get("case").asText();
            Class<?> cls;
            try {
                cls = Class.forName(c.get("class").asText());
            } catch (ClassNotFoundException e) {
                continue; // e.g. ToLogicalTopicRouter, not in Debezium 3.6.1
            }
            @SuppressWarnings("unchecked")
            Transformation<SourceRecord> t = (Transformation<SourceRecord>) cls.getDeclaredConstructor().newInstance();
            Map<String, String> cfg = new HashMap<>();
            if (c.hasNonNull("config")) c.get("config").fields().forEachRemaining(e -> cfg.put(e.getKey(), e.getValue().asText()));
            t.configure(cfg);
            for (JsonNode r : c.get("records")) {
                String topic = r.get("topic").asText();
                Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
                Long ts = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
                ConnectHeaders headers = new ConnectHeaders();
                if (r.has("headers")) for (JsonNode h : r.get("headers")) {
                    byte[] v = h.get(1).isNull() ? null : h.get(1).asText().getBytes(StandardCharsets.UTF_8);
                    SchemaAndValue sv = hc.toConnectHeader(topic, h.get(0).asText(), v);
                    headers.add(h.get(0).asText(), sv == null ? SchemaAndValue.NULL : sv);
                }
                SchemaAndValue k = keyConv.toConnectData(topic, r.get("key").isNull() ? null : om.writeValueAsBytes(r.get("key")));
                SchemaAndValue v = valConv.toConnectData(topic, r.get("value").isNull() ? null : om.writeValueAsBytes(r.get("value")));
                SourceRecord in = new SourceRecord(null, null, topic, partition, k.schema(), k.value(), v.schema(), v.value(), ts, headers);
                ObjectNode out = om.createObjectNode();
                out.put("case", name);
                try {
                    SourceRecord o = t.apply(in);
                    if (o == null) {
                        out.put("dropped", true);
                    } else {
                        out.put("topic", o.topic());
                        if (o.kafkaPartition() != null) out.put("partition", o.kafkaPartition());
                        if (o.timestamp() != null) out.put("timestamp", o.timestamp());
                        if (o.headers().size() > 0) {
                            ArrayNode hs = out.putArray("headers");
                            for (Header h : o.headers()) {
                                byte[] b = hc.fromConnectHeader(o.topic(), h.key(), h.schema(), h.value());
                                ArrayNode kv = hs.addArray();
                                kv.add(h.key());
                                if (b == null) kv.addNull(); else kv.add(new String(b, StandardCharsets.UTF_8));
                            }
                        }
                        byte[] kb = keyConv.fromConnectData(o.topic(), o.keySchema(), o.key());
                        byte[] vb = valConv.fromConnectData(o.topic(), o.valueSchema(), o.value());
                        // JsonConverter's own bytes, not re-serialised.
                        String line2 = om.writeValueAsString(out);
                        System.out.println(line2.substring(0, line2.length() - 1)
                                + ",\"key\":" + (kb == null ? "null" : new String(kb, StandardCharsets.UTF_8))
                                + ",\"value\":" + (vb == null ? "null" : new String(vb, StandardCharsets.UTF_8)) + "}");
                        continue;
                    }
                } catch (Exception e) {
                    out.put("error", e.toString() + (e.getCause() != null ? " / " + e.getCause() : ""));
                }
                System.out.println(om.writeValueAsString(out));
            }
            t.close();
        }
    }
}
