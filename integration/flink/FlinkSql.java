import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * A minimal Flink SQL client for a local MiniCluster (there is no
 * flink-dist on Maven Central): runs the statements of a SQL file in one
 * streaming TableEnvironment, in order. ${NAME} is replaced by the
 * environment variable NAME. Statements end with ';' at the end of a line;
 * lines starting with "--" are comments; "SET 'k' = 'v';" sets a
 * configuration option.
 *
 * INSERT statements are gathered into one statement set, executed (and
 * awaited) before the next SELECT or at the end of the file. A SELECT's
 * changelog is applied to a multiset of rows and, once the query ends
 * (bounded sources: 'scan.bounded.mode'), printed sorted, one row a line
 * as "| a | b |": the query's materialized result.
 *
 * Run by scripts/flink.sh sql VERSION FILE. A test peer only, never part
 * of connectd.
 */
public class FlinkSql {
  public static void main(String[] args) throws Exception {
    String text = Files.readString(Path.of(args[0]));
    Matcher m = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}").matcher(text);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      String v = System.getenv(m.group(1));
      if (v == null) throw new IllegalArgumentException("environment variable " + m.group(1) + " is not set");
      m.appendReplacement(sb, Matcher.quoteReplacement(v));
    }
    m.appendTail(sb);

    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().set("parallelism.default", "1");
    env.getConfig().set("table.exec.resource.default-parallelism", "1");
    List<String> inserts = new ArrayList<>();
    for (String stmt : statements(sb.toString())) {
      String head = stmt.stripLeading().toUpperCase();
      if (head.startsWith("INSERT")) {
        inserts.add(stmt);
        continue;
      }
      runInserts(env, inserts);
      Matcher set = SET.matcher(stmt.strip());
      if (set.matches()) {
        env.getConfig().set(set.group(1), set.group(2));
      } else if (head.startsWith("SELECT") || head.startsWith("WITH")) {
        printMaterialized(env.executeSql(stmt));
      } else {
        env.executeSql(stmt);
      }
    }
    runInserts(env, inserts);
    System.exit(0); // the MiniCluster's threads would keep the JVM alive
  }

  static final Pattern SET = Pattern.compile("(?is)SET\\s+'([^']*)'\\s*=\\s*'([^']*)'");

  static List<String> statements(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (String line : text.split("\n")) {
      if (line.strip().startsWith("--")) continue;
      cur.append(line).append('\n');
      if (line.stripTrailing().endsWith(";")) {
        String s = cur.toString().strip();
        out.add(s.substring(0, s.length() - 1));
        cur.setLength(0);
      }
    }
    if (!cur.toString().isBlank()) out.add(cur.toString().strip());
    return out;
  }

  static void runInserts(TableEnvironment env, List<String> inserts) throws Exception {
    if (inserts.isEmpty()) return;
    StatementSet set = env.createStatementSet();
    for (String s : inserts) set.addInsertSql(s);
    set.execute().await();
    inserts.clear();
  }

  static void printMaterialized(TableResult r) throws Exception {
    TreeMap<String, Integer> rows = new TreeMap<>();
    try (CloseableIterator<Row> it = r.collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        StringBuilder line = new StringBuilder("|");
        for (int i = 0; i < row.getArity(); i++) line.append(' ').append(row.getField(i)).append(" |");
        String k = line.toString();
        switch (row.getKind()) {
          case INSERT:
          case UPDATE_AFTER:
            rows.merge(k, 1, Integer::sum);
            break;
          default:
            if (rows.merge(k, -1, Integer::sum) == 0) rows.remove(k);
        }
      }
    }
    for (Map.Entry<String, Integer> e : rows.entrySet()) {
      if (e.getValue() < 0) throw new IllegalStateException("row retracted more often than inserted: " + e.getKey());
      for (int i = 0; i < e.getValue(); i++) System.out.println(e.getKey());
    }
  }
}
