/*
 * The Iceberg peer of the side-by-side benchmark (bench/side-by-side.ts): IcebergPeer's
 * ExpireSnapshots + orphan removal on one copy, timed inside the JVM. `java IcebergBenchPeer
 * job.json` prints one JSON document: the span's wall and CPU time (the whole JVM: every thread,
 * GC and JIT included), and IcebergPeer's result (what expired, what was deleted). The JVM's
 * start and class loading before the span are the process's wall time minus the span, which the
 * benchmark reports on a row of its own.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.lang.management.ManagementFactory;

public class IcebergBenchPeer {
  public static void main(String[] args) throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode job = json.readTree(new File(args[0]));
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ObjectNode result = json.createObjectNode();
    long cpu = os.getProcessCpuTime();
    long started = System.nanoTime();
    IcebergPeer.run(job, result);
    result.put("ms", (System.nanoTime() - started) / 1e6);
    result.put("cpu_ms", (os.getProcessCpuTime() - cpu) / 1e6);
    System.out.println(json.writeValueAsString(result));
  }
}
