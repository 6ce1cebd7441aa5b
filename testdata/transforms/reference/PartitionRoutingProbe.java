import java.util.*;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.source.SourceRecord;
import io.debezium.transforms.partitions.PartitionRouting;
import io.debezium.util.MurmurHash3;

public class PartitionRoutingProbe {
  public static void main(String[] a) throws Exception {
    MurmurHash3 m = MurmurHash3.getInstance();
    Object[] vals = {"", "a", "hammer", "scooter", "héllo wörld ünïcödé long string 12345", "\uD83D\uDE00x", 0, 1, -1, 123456789, (byte)-5, (short)300, 4102444800000L, -1L, true, false, 3.14f, 2.718281828, Double.NaN, new java.math.BigDecimal("12.50"), new java.math.BigDecimal("-123456789012345678901234.5"), new java.util.Date(1795946541581L), Arrays.asList("a", 1, null), java.nio.ByteBuffer.wrap(new byte[]{1,2,(byte)0x80})};
    for (Object v : vals) {
      System.out.println(v.getClass().getSimpleName() + "\t" + v + "\t" + v.hashCode() + "\t" + m.hash(v));
    }
    System.out.println("bytes-murmur\t" + m.hash(new byte[]{1,2,(byte)0x80,(byte)0xff,5,6,7,8,9,10,11,12,13,14,15,16,17,(byte)0x90}));
    // null intermediate struct
    Schema row = SchemaBuilder.struct().name("r").optional().field("id", Schema.INT32_SCHEMA).field("name", Schema.OPTIONAL_STRING_SCHEMA).build();
    Schema env = SchemaBuilder.struct().name("x.Envelope").field("before", row).field("after", row).field("op", Schema.STRING_SCHEMA).build();
    Struct e = new Struct(env).put("before", new Struct(row).put("id", 1).put("name", "hammer")).put("op", "d");
    PartitionRouting<SourceRecord> pr = new PartitionRouting<>();
    Map<String,String> cfg = new HashMap<>(); cfg.put("partition.payload.fields", a.length > 0 ? a[0] : "after.name"); cfg.put("partition.topic.num", "7");
    pr.configure(cfg);
    try {
      SourceRecord out = pr.apply(new SourceRecord(null, null, "t", null, null, null, env, e));
      System.out.println("partition=" + out.kafkaPartition());
    } catch (Exception ex) { System.out.println("ERR " + ex + " / " + ex.getCause()); }
  }
}
