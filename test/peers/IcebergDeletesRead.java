/*
 * Iceberg Java 1.10.0 reading a table back, deletes applied by Iceberg itself: the reader the
 * parity and scan tests hold lakewarden's copies and scans against.
 *
 *   java IcebergDeletesRead jobs.json
 *
 * Each job names a copy (`dir`, its current `metadata` file name) and a `mode`:
 *   snapshots  every snapshot the metadata still lists (or those of `only`): its row count and a
 *              SHA-256 of its rows (canonical JSON lines, sorted), so copies compare snapshot by
 *              snapshot without printing every row;
 *   files      the current snapshot: each data file's table-relative key and live rows, and
 *              IcebergGenerics' row count (its own reader, to hold the file-by-file read against).
 * Rows are read file by file as IcebergGenerics' GenericReader does: Iceberg's scan plans each
 * FileScanTask with the delete files that apply to it, iceberg-parquet's generic reader reads the
 * file and Iceberg's GenericDeleteFilter applies those deletes. Its delete loader keeps each delete
 * file once read (as Spark's executor cache does), for the job's table only: a table of 2,000 data
 * files read once per delete file, not once per data file.
 * Values are written as test/scan/scan_tables.py's `canonical` writes them: integers, decimals and
 * timestamps (microseconds) as text, NaN as "NaN", dates as ISO text.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

public class IcebergDeletesRead {
  static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");

  public static void main(String[] args) throws Exception {
    ObjectMapper json = new ObjectMapper();
    ArrayNode out = json.createArrayNode();
    for (JsonNode job : json.readTree(new File(args[0]))) {
      ObjectNode result = out.addObject();
      result.put("id", job.get("id").asText());
      try {
        IcebergPeer.TableFiles files = IcebergPeer.LocalFiles.open(Paths.get(job.get("dir").asText()), job.get("metadata").asText());
        String metadataPath = files.location() + "/metadata/" + job.get("metadata").asText();
        Table table = new BaseTable(new IcebergPeer.CopyTableOperations(files, TableMetadataParser.read(files.io(), metadataPath)), "read");
        if (job.get("mode").asText().equals("snapshots")) snapshots(json, table, job.path("only"), result);
        else files(json, table, files, result);
      } catch (Exception e) {
        result.put("error", e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n")[0]);
      }
    }
    System.out.println(json.writeValueAsString(out));
  }

  static void snapshots(ObjectMapper json, Table table, JsonNode only, ObjectNode result) throws Exception {
    ObjectNode bySnapshot = result.putObject("snapshots");
    Set<String> wanted = new HashSet<>();
    only.forEach(id -> wanted.add(id.asText()));
    CachedDeletes deletes = new CachedDeletes(table);
    for (Snapshot snapshot : table.snapshots()) {
      if (!wanted.isEmpty() && !wanted.contains(String.valueOf(snapshot.snapshotId()))) continue;
      List<String> lines = new ArrayList<>();
      for (List<Record> rows : liveRowsByFile(table, snapshot.snapshotId(), deletes).values()) {
        for (Record r : rows) lines.add(json.writeValueAsString(canonical(json, r)));
      }
      lines.sort(null);
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (String line : lines) sha.update((line + "\n").getBytes(StandardCharsets.UTF_8));
      bySnapshot.putObject(String.valueOf(snapshot.snapshotId())).put("rows", lines.size()).put("sha256", HexFormat.of().formatHex(sha.digest()));
    }
  }

  static void files(ObjectMapper json, Table table, IcebergPeer.TableFiles files, ObjectNode result) throws Exception {
    long snapshotId = table.currentSnapshot().snapshotId();
    ArrayNode byFile = result.putArray("files");
    for (Map.Entry<String, List<Record>> e : liveRowsByFile(table, snapshotId, new CachedDeletes(table)).entrySet()) {
      ObjectNode file = byFile.addObject();
      file.put("key", files.key(e.getKey()));
      ArrayNode rows = file.putArray("rows");
      for (Record r : e.getValue()) rows.add(canonical(json, r));
    }
    long count = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      for (Record ignored : rows) count++;
    }
    result.put("generics_rows", count);
    result.put("snapshot", String.valueOf(snapshotId));
  }

  /**
   * Each live data file's live rows at the snapshot, by its location: the file read with
   * iceberg-parquet's generic reader, filtered by Iceberg's own GenericDeleteFilter (the position
   * and equality deletes the scan planned for it), projected onto the snapshot's schema.
   */
  static Map<String, List<Record>> liveRowsByFile(Table table, long snapshotId, CachedDeletes loader) throws Exception {
    Schema schema = table.schemas().get(table.snapshot(snapshotId).schemaId());
    Map<String, List<Record>> out = new LinkedHashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshotId).planFiles()) {
      for (FileScanTask task : tasks) {
        GenericDeleteFilter deletes =
            new GenericDeleteFilter(table.io(), task, schema, schema) {
              @Override
              protected DeleteLoader newDeleteLoader() {
                return loader;
              }
            };
        Schema required = deletes.requiredSchema();
        CloseableIterable<Record> records =
            Parquet.read(table.io().newInputFile(task.file().location())).project(required).createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(required, fileSchema)).build();
        List<Record> rows = out.computeIfAbsent(task.file().location(), k -> new ArrayList<>());
        try (CloseableIterable<Record> kept = deletes.filter(records)) {
          for (Record r : kept) {
            Record row = GenericRecord.create(schema);
            for (Types.NestedField field : schema.columns()) row.setField(field.name(), r.getField(field.name()));
            rows.add(row);
          }
        }
      }
    }
    return out;
  }

  static ObjectNode canonical(ObjectMapper json, Record r) {
    ObjectNode row = json.createObjectNode();
    for (Types.NestedField field : r.struct().fields()) {
      Object v = r.getField(field.name());
      if (v == null) row.putNull(field.name());
      else if (v instanceof Boolean b) row.put(field.name(), b);
      else if (v instanceof String s) row.put(field.name(), s);
      else if (v instanceof Double d) {
        if (d.isNaN()) row.put(field.name(), "NaN");
        else row.put(field.name(), d);
      } else if (v instanceof Long || v instanceof Integer) row.put(field.name(), String.valueOf(v));
      else if (v instanceof BigDecimal d) row.put(field.name(), d.toPlainString());
      else if (v instanceof LocalDate d) row.put(field.name(), d.toString());
      else if (v instanceof LocalDateTime t) {
        long micros = t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1000;
        row.put(field.name(), String.valueOf(micros));
      } else row.put(field.name(), String.valueOf(v));
    }
    return row;
  }

  /** A value as test/scan/random-filters.ts takes a literal. */
  static ObjectNode literal(ObjectMapper json, Object v) {
    ObjectNode lit = json.createObjectNode();
    if (v == null) return lit.put("type", "null");
    if (v instanceof Boolean b) return lit.put("type", "boolean").put("value", b);
    if (v instanceof String s) return lit.put("type", "string").put("value", s);
    if (v instanceof Double d) return lit.put("type", "number").put("text", d.isNaN() ? "NaN" : String.valueOf(d));
    if (v instanceof BigDecimal d) return lit.put("type", "number").put("text", d.toPlainString());
    if (v instanceof Number n) return lit.put("type", "number").put("text", String.valueOf(n));
    if (v instanceof LocalDate d) return lit.put("type", "date").put("text", d.toString());
    if (v instanceof LocalDateTime t) return lit.put("type", "timestamp").put("text", t.format(TIMESTAMP));
    return lit.put("type", "string").put("value", String.valueOf(v));
  }

  /** Iceberg's delete loader, with every delete file it reads kept for the table it was made for. */
  static final class CachedDeletes extends BaseDeleteLoader {
    // Iceberg loads delete files on its worker pool, a load can ask for another: no lock held while loading.
    private final Map<String, Object> cache = new ConcurrentHashMap<>();

    CachedDeletes(Table table) {
      super(deleteFile -> table.io().newInputFile(deleteFile.location()));
    }

    @Override
    protected boolean canCache(long size) {
      return true;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected <V> V getOrLoad(String key, Supplier<V> load, long size) {
      Object value = cache.get(key);
      if (value == null) {
        value = load.get();
        cache.putIfAbsent(key, value);
      }
      return (V) value;
    }
  }
}
