package ref;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;

import io.debezium.embedded.EmbeddedEngineChangeEvent;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

/**
 * Test peer only (never part of connectd): runs the real Debezium connector in the embedded
 * engine with the Kafka Connect JsonConverter (schemas.enable=true) and records every change
 * event as one JSON line {"topic":..., "key":..., "value":...}. Key and value are embedded
 * byte-for-byte as produced by JsonConverter (so field order and number formatting are the
 * reference's own), or null.
 *
 * Usage:
 *   java -jar debezium-capture.jar PROPS OUTPUT MAX_RECORDS IDLE_SECONDS [HOOK_CMD]
 *
 *   PROPS         .properties file with engine + connector properties
 *   OUTPUT        output .jsonl file; offsets are dumped to OUTPUT.offsets.jsonl on exit
 *   MAX_RECORDS   stop after this many records (0 = no limit)
 *   IDLE_SECONDS  stop after this many seconds without a new record (counted from the first
 *                 record; before the first record a startup timeout of 180 s applies)
 *   CAPTURE_HEADERS=1 (environment): every line also gets "headers":[[key, value text], ...], the
 *                 record's Connect headers as a worker's SimpleHeaderConverter writes them.
 *   HOOK_CMD      optional shell command run once, after the snapshot has finished (a record
 *                 whose source.snapshot is "last" was seen, or the stream went idle for
 *                 IDLE_SECONDS after snapshot records) and the engine has been quiet for 3 s.
 *                 Before it runs, the offset file is dumped to OUTPUT.snapshot.offsets.jsonl.
 *                 Its stdout/stderr are inherited. The idle timer restarts after the hook.
 *
 * A record with Kafka Connect headers also has "headers":[{"key":...,"value":...},...]: each
 * header's bytes as a Kafka Connect worker's default header.converter (SimpleHeaderConverter)
 * writes them, as a UTF-8 string (null for a null value). Records without headers have no
 * "headers" field.
 *
 * Besides OUTPUT it writes OUTPUT.record-offsets.jsonl: for every record (same line number as
 * in OUTPUT) the source partition/offset the connector attached to it, serialized exactly as
 * Kafka Connect's OffsetStorageWriter would (JsonConverter, schemas disabled):
 * {"key":[<engine name>,<partition>],"value":<offset>}.
 */
public final class Capture {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final boolean CAPTURE_HEADERS = "1".equals(System.getenv("CAPTURE_HEADERS"));
    private static final org.apache.kafka.connect.storage.SimpleHeaderConverter HEADER_CONVERTER =
            new org.apache.kafka.connect.storage.SimpleHeaderConverter();
    private static final long STARTUP_TIMEOUT_MS = 180_000;
    private static final long HOOK_QUIET_MS = 3_000;

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: Capture PROPS OUTPUT MAX_RECORDS IDLE_SECONDS [HOOK_CMD]");
            System.exit(2);
        }
        Path propsPath = Paths.get(args[0]);
        Path out = Paths.get(args[1]);
        long maxRecords = Long.parseLong(args[2]);
        long idleMs = Long.parseLong(args[3]) * 1000L;
        String hook = args.length > 4 ? args[4] : null;

        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(propsPath)) {
            props.load(in);
        }
        props.putIfAbsent("name", "debezium_ref");
        props.putIfAbsent("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        if (!props.containsKey("offset.storage.file.filename")) {
            props.setProperty("offset.storage.file.filename", out + ".offsets.dat");
        }
        props.putIfAbsent("offset.flush.interval.ms", "0");
        props.putIfAbsent("converter.schemas.enable", "true");
        props.putIfAbsent("key.converter.schemas.enable", "true");
        props.putIfAbsent("value.converter.schemas.enable", "true");
        Path offsetFile = Paths.get(props.getProperty("offset.storage.file.filename"));

        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }

        final Object lock = new Object();
        final AtomicLong count = new AtomicLong();
        final AtomicLong lastRecordAt = new AtomicLong(0);
        final AtomicReference<Boolean> snapshotLastSeen = new AtomicReference<>(false);
        final AtomicReference<Boolean> sawSnapshotRecord = new AtomicReference<>(false);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicReference<Boolean> engineDone = new AtomicReference<>(false);

        final String engineName = props.getProperty("name");
        final JsonConverter offsetConverter = new JsonConverter();
        offsetConverter.configure(Map.of("schemas.enable", "false", "converter.type", "key"), true);
        final SimpleHeaderConverter headerConverter = new SimpleHeaderConverter();
        headerConverter.configure(Map.of());

        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8);
                Writer ow = Files.newBufferedWriter(Paths.get(out + ".record-offsets.jsonl"), StandardCharsets.UTF_8)) {
            DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
                    .using(props)
                    .using((success, message, error) -> {
                        if (!success) {
                            System.err.println("[capture] engine stopped with error: " + message);
                            if (error != null) {
                                error.printStackTrace();
                                failure.set(error);
                            }
                            else {
                                failure.set(new RuntimeException(message));
                            }
                        }
                        engineDone.set(true);
                    })
                    .notifying(record -> {
                        synchronized (lock) {
                            try {
                                StringBuilder sb = new StringBuilder();
                                sb.append("{\"topic\":").append(MAPPER.writeValueAsString(record.destination()));
                                sb.append(",\"key\":").append(embed(record.key()));
                                sb.append(",\"value\":").append(embed(record.value()));
                                SourceRecord sr = ((EmbeddedEngineChangeEvent<?, ?, ?>) record).sourceRecord();
                                if (CAPTURE_HEADERS) {
                                    // CAPTURE_HEADERS=1: the record's Connect headers as a worker's
                                    // default SimpleHeaderConverter writes them: [[key, value text], ...]
                                    sb.append(",\"headers\":[");
                                    boolean firstH = true;
                                    for (org.apache.kafka.connect.header.Header h : sr.headers()) {
                                        byte[] hv = HEADER_CONVERTER.fromConnectHeader(sr.topic(), h.key(), h.schema(), h.value());
                                        sb.append(firstH ? "" : ",").append("[").append(MAPPER.writeValueAsString(h.key())).append(",")
                                                .append(hv == null ? "null" : MAPPER.writeValueAsString(new String(hv, StandardCharsets.UTF_8))).append("]");
                                        firstH = false;
                                    }
                                    sb.append("]");
                                } else if (sr.headers() != null && !sr.headers().isEmpty()) {
                                    sb.append(",\"headers\":[");
                                    boolean first = true;
                                    for (Header h : sr.headers()) {
                                        byte[] hb = headerConverter.fromConnectHeader(sr.topic(), h.key(), h.schema(), h.value());
                                        sb.append(first ? "" : ",").append("{\"key\":").append(MAPPER.writeValueAsString(h.key()))
                                                .append(",\"value\":").append(hb == null ? "null"
                                                        : MAPPER.writeValueAsString(new String(hb, StandardCharsets.UTF_8)))
                                                .append("}");
                                        first = false;
                                    }
                                    sb.append("]");
                                }
                                sb.append("}\n");
                                w.write(sb.toString());
                                w.flush();
                                byte[] k = offsetConverter.fromConnectData(engineName, null,
                                        java.util.Arrays.asList(engineName, sr.sourcePartition()));
                                byte[] v = offsetConverter.fromConnectData(engineName, null, sr.sourceOffset());
                                ow.write("{\"key\":" + jsonOrString(k) + ",\"value\":" + jsonOrString(v) + "}\n");
                                ow.flush();
                            }
                            catch (IOException e) {
                                throw new RuntimeException(e);
                            }
                            String snap = snapshotMarker(record.value());
                            if (snap != null && !"false".equals(snap)) {
                                sawSnapshotRecord.set(true);
                            }
                            if ("last".equals(snap)) {
                                snapshotLastSeen.set(true);
                            }
                            count.incrementAndGet();
                            lastRecordAt.set(System.currentTimeMillis());
                        }
                    })
                    .build();

            ExecutorService executor = Executors.newSingleThreadExecutor();
            executor.execute(engine);

            long start = System.currentTimeMillis();
            boolean hookDone = hook == null;
            while (true) {
                Thread.sleep(200);
                long now = System.currentTimeMillis();
                if (engineDone.get()) {
                    System.err.println("[capture] engine terminated by itself");
                    break;
                }
                if (maxRecords > 0 && count.get() >= maxRecords) {
                    System.err.println("[capture] reached " + count.get() + " records");
                    break;
                }
                long last = lastRecordAt.get();
                if (last == 0) {
                    if (now - start > STARTUP_TIMEOUT_MS) {
                        System.err.println("[capture] no record within startup timeout");
                        break;
                    }
                    continue;
                }
                if (!hookDone) {
                    boolean snapshotOver = snapshotLastSeen.get()
                            || (sawSnapshotRecord.get() && now - last >= idleMs);
                    if (snapshotOver && now - last >= HOOK_QUIET_MS) {
                        dumpOffsets(offsetFile, Paths.get(out + ".snapshot.offsets.jsonl"));
                        System.err.println("[capture] snapshot done after " + count.get()
                                + " records; running hook: " + hook);
                        Process p = new ProcessBuilder("/bin/sh", "-c", hook).inheritIO().start();
                        int rc = p.waitFor();
                        System.err.println("[capture] hook exited with " + rc);
                        if (rc != 0) {
                            failure.set(new RuntimeException("hook failed with exit code " + rc));
                            break;
                        }
                        hookDone = true;
                        lastRecordAt.set(System.currentTimeMillis());
                    }
                    continue;
                }
                if (now - last >= idleMs) {
                    System.err.println("[capture] idle for " + (now - last) + " ms after "
                            + count.get() + " records");
                    break;
                }
            }

            try {
                engine.close();
            }
            catch (IllegalStateException e) {
                // the engine already shut itself down after a failure
            }
            executor.shutdown();
            executor.awaitTermination(60, TimeUnit.SECONDS);
        }

        dumpOffsets(offsetFile, Paths.get(out + ".offsets.jsonl"));
        System.err.println("[capture] wrote " + count.get() + " records to " + out);
        if (failure.get() != null) {
            System.exit(1);
        }
        System.exit(0);
    }

    /** Embeds a JsonConverter output string verbatim (it is already compact JSON), or null. */
    private static String embed(String json) throws IOException {
        if (json == null) {
            return "null";
        }
        // Validate that it is JSON; keep the original text so field order/number format are exact.
        MAPPER.readTree(json);
        if (json.indexOf('\n') >= 0 || json.indexOf('\r') >= 0) {
            return MAPPER.writeValueAsString(MAPPER.readTree(json));
        }
        return json;
    }

    private static String snapshotMarker(String valueJson) {
        if (valueJson == null) {
            return null;
        }
        try {
            JsonNode v = MAPPER.readTree(valueJson);
            JsonNode payload = v.has("payload") ? v.get("payload") : v;
            JsonNode source = payload == null ? null : payload.get("source");
            if (source == null || source.get("snapshot") == null || source.get("snapshot").isNull()) {
                return null;
            }
            return source.get("snapshot").asText();
        }
        catch (IOException e) {
            return null;
        }
    }

    /**
     * Reads the FileOffsetBackingStore file exactly as Kafka does (a Java-serialized
     * HashMap<byte[], byte[]>; older Kafka wrote ByteBuffer) and prints each entry as
     * {"key":<key JSON>,"value":<value JSON>} — key/value are the UTF-8 JSON bytes written by
     * the internal JsonConverter (schemas disabled).
     */
    @SuppressWarnings("unchecked")
    private static void dumpOffsets(Path offsetFile, Path dest) throws IOException {
        List<String> lines = new ArrayList<>();
        File f = offsetFile.toFile();
        if (f.exists() && f.length() > 0) {
            try (ObjectInputStream is = new ObjectInputStream(new FileInputStream(f))) {
                Object obj = is.readObject();
                if (!(obj instanceof Map)) {
                    throw new IOException("unexpected offset file content: " + obj.getClass());
                }
                for (Map.Entry<Object, Object> e : ((Map<Object, Object>) obj).entrySet()) {
                    lines.add("{\"key\":" + jsonOrString(bytes(e.getKey())) + ",\"value\":"
                            + jsonOrString(bytes(e.getValue())) + "}");
                }
            }
            catch (ClassNotFoundException e) {
                throw new IOException(e);
            }
        }
        lines.sort(null);
        try (BufferedWriter w = Files.newBufferedWriter(dest, StandardCharsets.UTF_8)) {
            for (String l : lines) {
                w.write(l);
                w.write('\n');
            }
        }
    }

    private static byte[] bytes(Object o) {
        if (o == null) {
            return null;
        }
        if (o instanceof byte[]) {
            return (byte[]) o;
        }
        if (o instanceof ByteBuffer) {
            ByteBuffer b = ((ByteBuffer) o).duplicate();
            byte[] arr = new byte[b.remaining()];
            b.get(arr);
            return arr;
        }
        throw new IllegalArgumentException("unexpected offset entry type " + o.getClass());
    }

    private static String jsonOrString(byte[] b) throws IOException {
        if (b == null) {
            return "null";
        }
        String s = new String(b, StandardCharsets.UTF_8);
        try {
            MAPPER.readTree(s);
            return s;
        }
        catch (IOException e) {
            return MAPPER.writeValueAsString(s);
        }
    }
}
