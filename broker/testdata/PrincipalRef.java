// The reference for broker/tls_principal_test.go: Java's X500Principal
// names and Kafka's SslPrincipalMapper, one request per stdin line:
//   dn <hex DER of a Name>        -> X500Principal.getName() (RFC 2253)
//   map <rules> \t <name>          -> SslPrincipalMapper.fromRules(rules).getName(name)
// Each answer is one line: "ok <value>" or "error <exception class>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import javax.security.auth.x500.X500Principal;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

public class PrincipalRef {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            try {
                if (line.startsWith("dn ")) {
                    byte[] der = java.util.HexFormat.of().parseHex(line.substring(3));
                    String name = new X500Principal(der).getName();
                    out.append("ok ").append(name);
                } else {
                    String[] p = line.substring(4).split("\t", 2);
                    String name = SslPrincipalMapper.fromRules(p[0]).getName(p[1]);
                    out.append("ok ").append(name);
                }
            } catch (Exception e) {
                out.append("error ").append(e.getClass().getSimpleName());
            }
            // One answer per line (the inputs have no newlines).
            out.append('\n');
        }
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }
}
