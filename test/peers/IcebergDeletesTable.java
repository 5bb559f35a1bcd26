/*
 * An Iceberg v2 table with equality and position deletes, written by Iceberg Java 1.10.0 itself
 * (iceberg-data's generic records and appender factory, iceberg-parquet's writers): the healthy
 * merge-on-read table no fixture and no Python writer gives. Catalog-less: vN.metadata.json and the
 * version hint under metadata/, written through IcebergPeer's CopyTableOperations, with the
 * files named under a made-up s3:// location that IcebergPeer's LocalCopyIO maps onto the folder
 * (so a reader that does not map it reads nothing by mistake, and every copy is the same table).
 *
 *   java IcebergDeletesTable <dir> <location> <data files> <rows per file> <seed>
 *
 * The history (main keeps its last 3 snapshots, max age 2 s; a tag and a branch keep older ones):
 *   s1, s2  appends, unpartitioned (spec 0); tag `first` on s2
 *   s3      global equality deletes by id, position deletes naming many data files per delete file
 *   audit   a branch from s3: a global equality delete by id and an append
 *   spec 1  identity(part) added
 *   s4      appends, one partition per file
 *   s5      upsert: per partition, equality deletes by id (ids of older spec-0 rows among them,
 *           which a partition-scoped delete must not touch) and the rows written again
 *   s6      file-scoped position deletes; equality deletes on category (with null) in one
 *           partition and on (category, qty) in another
 *   s7      global equality deletes on category and on day (a date)
 *   s8      appends; then a column (note) added
 *   s9      equality deletes on (qty, note) in partition c, note null as in every older row
 *   s10     a compaction: data files with file-scoped position deletes rewritten, their
 *           position delete files removed
 *   s11-12  an equality delete of two ids of an s8 file, then that file rewritten from what it
 *           held before them with the older data sequence number (Spark's compaction with its
 *           starting sequence number), so the delete still applies to the new file
 *   s13     a data file deleted whole; s14, s15 appends
 * and one data file written but never committed (an orphan). Prints one JSON document: the
 * location, the snapshots, the refs, the counts of files by kind, and per column a few values
 * for the scan oracle's random filters (literals as test/scan/random-filters.ts takes them).
 */
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

public class IcebergDeletesTable {
  static final Schema FIRST_SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "category", Types.StringType.get()),
          Types.NestedField.optional(3, "qty", Types.IntegerType.get()),
          Types.NestedField.optional(4, "price", Types.DoubleType.get()),
          Types.NestedField.optional(5, "day", Types.DateType.get()),
          Types.NestedField.optional(6, "ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(7, "amount", Types.DecimalType.of(9, 2)),
          Types.NestedField.optional(8, "flag", Types.BooleanType.get()),
          Types.NestedField.optional(9, "part", Types.StringType.get()));
  static final String[] WORDS = {"apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "ÿlang", "😀smile"};
  static final String[] PARTS = {"a", "b", "c", null};
  static final LocalDate BASE_DAY = LocalDate.of(2024, 1, 1);
  static final LocalDateTime BASE_TS = LocalDateTime.of(2024, 1, 1, 0, 0);

  /** A data file as written, with its rows, so later commits can name rows and positions in it. */
  record Written(DataFile file, List<Record> rows) {}

  final Table table;
  final Random rng;
  final int rowsPerFile;
  final List<Written> live = new ArrayList<>();
  /** Files only expired snapshots reach once the history is written: the compacted data files and their position deletes. */
  final List<String> compacted = new ArrayList<>();
  String orphan;
  long nextId = 1;
  int task = 0;

  IcebergDeletesTable(Table table, long seed, int rowsPerFile) {
    this.table = table;
    this.rng = new Random(seed);
    this.rowsPerFile = rowsPerFile;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]).toAbsolutePath();
    String location = args[1].replaceAll("/+$", "");
    int dataFiles = Integer.parseInt(args[2]);
    int rowsPerFile = Integer.parseInt(args[3]);
    long seed = Long.parseLong(args[4]);
    Table table = create(dir, location);
    IcebergDeletesTable writer = new IcebergDeletesTable(table, seed, rowsPerFile);
    ObjectNode out = writer.writeHistory(dataFiles);
    out.put("location", location);
    System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(out));
  }

  /** v1.metadata.json and the hint, then the table opened through IcebergPeer's copy operations. */
  static Table create(Path dir, String location) throws Exception {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("format-version", "2");
    properties.put("write.delete.mode", "merge-on-read");
    properties.put("history.expire.max-snapshot-age-ms", "2000");
    properties.put("history.expire.min-snapshots-to-keep", "3");
    TableMetadata metadata = TableMetadata.newTableMetadata(FIRST_SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(), location, properties);
    Files.createDirectories(dir.resolve("metadata"));
    LocationIO io = new LocationIO(new IcebergPeer.LocalCopyIO(location, dir));
    TableMetadataParser.write(metadata, io.newOutputFile(location + "/metadata/v1.metadata.json"));
    Files.writeString(dir.resolve("metadata/version-hint.text"), "1", StandardCharsets.UTF_8);
    IcebergPeer.TableFiles files = new NamedFiles(IcebergPeer.LocalFiles.open(dir, "v1.metadata.json"), io);
    IcebergPeer.CopyTableOperations ops = new IcebergPeer.CopyTableOperations(files, TableMetadataParser.read(files.io(), location + "/metadata/v1.metadata.json"));
    return new BaseTable(ops, "deletes");
  }

  ObjectNode writeHistory(int dataFiles) throws Exception {
    int share = Math.max(1, dataFiles / 20);
    append(spec0(), 4 * share, null);
    append(spec0(), 3 * share, null);
    long s2 = table.currentSnapshot().snapshotId();
    table.manageSnapshots().createTag("first", s2).commit();
    globalDeletesAndPositions();
    long s3 = table.currentSnapshot().snapshotId();
    table.manageSnapshots().createBranch("audit", s3).commit();
    auditBranch();
    table.updateSpec().addField("part").commit();
    List<Written> s4 = append(table.spec(), 5 * share, null);
    upsert(Math.max(1, share / 2));
    Map<Written, DeleteFile> scoped = fileScopedPositionsAndCategories(s4);
    globalCategoryAndDay();
    List<Written> s8 = append(table.spec(), 3 * share, null);
    table.updateSchema().addColumn("note", Types.StringType.get()).commit();
    equalityOnAddedColumn();
    compact(scoped);
    compactKeepingSequence(s8);
    dropWholeFile();
    append(table.spec(), 2 * share, null);
    append(table.spec(), Math.max(1, dataFiles - 17 * share - 4 * Math.max(1, share / 2) - 1), null);
    orphan();
    return summary();
  }

  PartitionSpec spec0() {
    return table.specs().get(0);
  }

  // ---- rows ----

  Record row(long id, String part) {
    Record r = GenericRecord.create(table.schema());
    r.setField("id", id);
    r.setField("category", rng.nextInt(12) == 0 ? null : WORDS[rng.nextInt(WORDS.length)]);
    r.setField("qty", rng.nextInt(20) == 0 ? null : rng.nextInt(101) - 50);
    double price = Math.round((rng.nextDouble() * 200 - 50) * 100) / 100.0;
    r.setField("price", rng.nextInt(20) == 0 ? null : rng.nextInt(30) == 0 ? Double.NaN : price);
    r.setField("day", rng.nextInt(25) == 0 ? null : BASE_DAY.plusDays(rng.nextInt(400)));
    r.setField("ts", rng.nextInt(25) == 0 ? null : BASE_TS.plusSeconds(rng.nextInt(400 * 86400)).plusNanos(1000L * rng.nextInt(1_000_000)));
    r.setField("amount", rng.nextInt(25) == 0 ? null : BigDecimal.valueOf(rng.nextInt(2_000_001) - 1_000_000, 2));
    r.setField("flag", rng.nextInt(15) == 0 ? null : rng.nextBoolean());
    r.setField("part", part);
    if (table.schema().findField("note") != null) r.setField("note", rng.nextInt(4) == 0 ? null : WORDS[rng.nextInt(WORDS.length)]);
    return r;
  }

  List<Record> rows(String fixedPart, boolean partitioned) {
    List<Record> rows = new ArrayList<>();
    for (int i = 0; i < rowsPerFile; i++) rows.add(row(nextId++, partitioned ? fixedPart : PARTS[rng.nextInt(PARTS.length)]));
    return rows;
  }

  // ---- files ----

  /** A new file's name: under data/ and the partition's folder; an unpartitioned file straight under data/ (not data//). */
  EncryptedOutputFile newFile(PartitionSpec spec, StructLike partition) {
    OutputFileFactory factory = OutputFileFactory.builderFor(table, task++, 0).format(FileFormat.PARQUET).build();
    return spec.isUnpartitioned() ? factory.newOutputFile() : factory.newOutputFile(spec, partition);
  }

  StructLike partitionOf(PartitionSpec spec, String part) {
    if (spec.isUnpartitioned()) return null;
    PartitionKey key = new PartitionKey(spec, table.schema());
    Record r = GenericRecord.create(table.schema());
    r.setField("part", part);
    key.partition(r);
    return key;
  }

  Written writeData(PartitionSpec spec, String part, List<Record> rows) throws Exception {
    StructLike partition = partitionOf(spec, part);
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), spec);
    DataWriter<Record> writer = factory.newDataWriter(newFile(spec, partition), FileFormat.PARQUET, partition);
    try (writer) {
      for (Record r : rows) writer.write(r);
    }
    return new Written(writer.toDataFile(), rows);
  }

  /** An equality delete file on `columns`, one row per key (values in the columns' order; null allowed). */
  DeleteFile writeEquality(PartitionSpec spec, String part, String[] columns, List<Object[]> keys) throws Exception {
    int[] ids = new int[columns.length];
    Set<Integer> idSet = new HashSet<>();
    for (int i = 0; i < columns.length; i++) idSet.add(ids[i] = table.schema().findField(columns[i]).fieldId());
    Schema deleteSchema = TypeUtil.select(table.schema(), idSet);
    StructLike partition = partitionOf(spec, part);
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), spec, ids, deleteSchema, null);
    EqualityDeleteWriter<Record> writer = factory.newEqDeleteWriter(newFile(spec, partition), FileFormat.PARQUET, partition);
    try (writer) {
      for (Object[] key : keys) {
        Record r = GenericRecord.create(deleteSchema);
        for (int i = 0; i < columns.length; i++) r.setField(columns[i], key[i]);
        writer.write(r);
      }
    }
    return writer.toDeleteFile();
  }

  /** A position delete file naming `positions` of each of `targets` (sorted by path, then position, as the spec asks). */
  DeleteFile writePositions(PartitionSpec spec, String part, List<Written> targets, int[] positions) throws Exception {
    StructLike partition = partitionOf(spec, part);
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), spec, null, null, null);
    PositionDeleteWriter<Record> writer = factory.newPosDeleteWriter(newFile(spec, partition), FileFormat.PARQUET, partition);
    TreeMap<String, Written> byPath = new TreeMap<>();
    for (Written w : targets) byPath.put(w.file().location(), w);
    PositionDelete<Record> delete = PositionDelete.create();
    try (writer) {
      for (Map.Entry<String, Written> e : byPath.entrySet()) {
        for (int p : positions) if (p < e.getValue().rows().size()) writer.write(delete.set(e.getKey(), p, null));
      }
    }
    return writer.toDeleteFile();
  }

  // ---- commits ----

  List<Written> append(PartitionSpec spec, int count, String branch) throws Exception {
    List<Written> written = new ArrayList<>();
    AppendFiles append = table.newAppend();
    if (branch != null) append = append.toBranch(branch);
    for (int i = 0; i < count; i++) {
      String part = PARTS[i % PARTS.length];
      Written w = writeData(spec, part, rows(part, !spec.isUnpartitioned()));
      written.add(w);
      append.appendFile(w.file());
    }
    append.commit();
    if (branch == null) live.addAll(written);
    return written;
  }

  List<Object[]> idsOf(List<Written> files, int every) {
    List<Object[]> keys = new ArrayList<>();
    for (Written w : files) for (Record r : w.rows()) if ((Long) r.getField("id") % every == 0) keys.add(new Object[] {r.getField("id")});
    return keys;
  }

  /** s3: every 7th id deleted everywhere; rows 0 and 3 of every third file, 25 data files to a position delete file. */
  void globalDeletesAndPositions() throws Exception {
    RowDelta delta = table.newRowDelta();
    delta.addDeletes(writeEquality(spec0(), null, new String[] {"id"}, idsOf(live, 7)));
    List<Written> targets = new ArrayList<>();
    for (int i = 0; i < live.size(); i += 3) targets.add(live.get(i));
    for (int i = 0; i < targets.size(); i += 25) delta.addDeletes(writePositions(spec0(), null, targets.subList(i, Math.min(targets.size(), i + 25)), new int[] {0, 3}));
    delta.commit();
  }

  /** On the branch only: every 11th id deleted, and a file appended. */
  void auditBranch() throws Exception {
    table.newRowDelta().addDeletes(writeEquality(spec0(), null, new String[] {"id"}, idsOf(live, 11))).toBranch("audit").commit();
    append(spec0(), 1, "audit");
  }

  /**
   * s5, an upsert per partition: every 5th id of the partition's spec-1 rows deleted and written
   * again with another qty in the same commit (the same sequence number: the delete does not
   * apply to them), and the ids of a few spec-0 rows, which this partition-scoped delete must not touch.
   */
  void upsert(int filesPerPartition) throws Exception {
    RowDelta delta = table.newRowDelta();
    PartitionSpec spec = table.spec();
    for (String part : PARTS) {
      List<Object[]> keys = new ArrayList<>();
      List<Record> again = new ArrayList<>();
      for (Written w : live) {
        if (w.file().specId() != spec.specId() || !java.util.Objects.equals(w.rows().get(0).getField("part"), part)) continue;
        for (Record r : w.rows()) {
          if ((Long) r.getField("id") % 5 != 0) continue;
          keys.add(new Object[] {r.getField("id")});
          Record copy = r.copy();
          copy.setField("qty", rng.nextInt(101) - 50);
          again.add(copy);
        }
      }
      for (int i = 0; i < 3 && i < live.size(); i++) keys.add(new Object[] {live.get(i).rows().get(1).getField("id")});
      delta.addDeletes(writeEquality(spec, part, new String[] {"id"}, keys));
      int per = Math.max(1, (again.size() + filesPerPartition - 1) / filesPerPartition);
      for (int i = 0; i < again.size(); i += per) {
        Written w = writeData(spec, part, new ArrayList<>(again.subList(i, Math.min(again.size(), i + per))));
        delta.addRows(w.file());
        live.add(w);
      }
    }
    delta.commit();
  }

  /**
   * s6: rows 1 and 2 of every third s4 file, one position delete file per data file (Iceberg
   * 1.10's writer leaves its referenced_data_file unset: readers match its file_path); category apple or null deleted in partition a only, and
   * (category, qty) pairs of partition b's rows, one with a null qty.
   */
  Map<Written, DeleteFile> fileScopedPositionsAndCategories(List<Written> s4) throws Exception {
    RowDelta delta = table.newRowDelta();
    PartitionSpec spec = table.spec();
    Map<Written, DeleteFile> scoped = new LinkedHashMap<>();
    for (int i = 0; i < s4.size(); i += 3) {
      Written w = s4.get(i);
      DeleteFile d = writePositions(spec, (String) w.rows().get(0).getField("part"), List.of(w), new int[] {1, 2});
      scoped.put(w, d);
      delta.addDeletes(d);
    }
    delta.addDeletes(writeEquality(spec, "a", new String[] {"category"}, List.of(new Object[] {"apple"}, new Object[] {null})));
    List<Object[]> pairs = new ArrayList<>();
    for (Written w : s4) {
      if (!"b".equals(w.rows().get(0).getField("part"))) continue;
      Record r = w.rows().get(rowsPerFile / 2);
      pairs.add(new Object[] {r.getField("category"), r.getField("qty")});
    }
    pairs.add(new Object[] {"cherry", null});
    delta.addDeletes(writeEquality(spec, "b", new String[] {"category", "qty"}, pairs));
    delta.commit();
    return scoped;
  }

  /** s7: equality deletes in the unpartitioned spec, so they apply to every partition: category banana, and one day. */
  void globalCategoryAndDay() throws Exception {
    RowDelta delta = table.newRowDelta();
    delta.addDeletes(writeEquality(spec0(), null, new String[] {"category"}, List.<Object[]>of(new Object[] {"banana"})));
    delta.addDeletes(writeEquality(spec0(), null, new String[] {"day"}, List.<Object[]>of(new Object[] {BASE_DAY.plusDays(17)})));
    delta.commit();
  }

  /** s9: half of the files with a file-scoped position delete rewritten from their live rows (Iceberg's own read), the delete files removed. */
  void compact(Map<Written, DeleteFile> scoped) throws Exception {
    Map<String, List<Record>> liveRows = IcebergDeletesRead.liveRowsByFile(table, table.currentSnapshot().snapshotId(), new IcebergDeletesRead.CachedDeletes(table));
    // Read at the current snapshot: Iceberg checks that no delete was added for the replaced files since.
    RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(table.currentSnapshot().snapshotId());
    int n = 0;
    for (Map.Entry<Written, DeleteFile> e : scoped.entrySet()) {
      if (n++ % 2 != 0) continue;
      Written old = e.getKey();
      List<Record> rows = liveRows.getOrDefault(old.file().location(), List.of());
      rewrite.deleteFile(old.file()).deleteFile(e.getValue());
      compacted.add(old.file().location());
      compacted.add(e.getValue().location());
      live.remove(old);
      // Iceberg's Parquet writer creates no file for no rows (yet reports a data file): a file with no live row is dropped, not rewritten.
      if (rows.isEmpty()) continue;
      Written rewritten = writeData(table.specs().get(old.file().specId()), (String) old.rows().get(0).getField("part"), rows);
      rewrite.addFile(rewritten.file());
      live.add(rewritten);
    }
    rewrite.commit();
  }

  /**
   * After the column note is added: (qty, note) pairs deleted in partition c, note null, as every
   * row written before the column has it (a reader fills the missing column with null, and null
   * equals null in an equality delete).
   */
  void equalityOnAddedColumn() throws Exception {
    List<Object[]> keys = new ArrayList<>();
    for (Written w : live) {
      if (w.file().specId() == 0 || !"c".equals(w.rows().get(0).getField("part"))) continue;
      keys.add(new Object[] {w.rows().get(w.rows().size() - 1).getField("qty"), null});
    }
    keys.add(new Object[] {7, "kiwi"});
    table.newRowDelta().addDeletes(writeEquality(table.spec(), "c", new String[] {"qty", "note"}, keys)).commit();
  }

  /**
   * A compaction as Spark's with its starting sequence number: an s8 file read at snapshot S, then
   * an equality delete of two of its ids committed, then the rewrite committed with S's data
   * sequence number, so the later delete still applies to the rewritten file (a reader that took
   * the file's own sequence number would bring the two rows back).
   */
  void compactKeepingSequence(List<Written> candidates) throws Exception {
    Snapshot start = table.currentSnapshot();
    Map<String, List<Record>> liveRows = IcebergDeletesRead.liveRowsByFile(table, start.snapshotId(), new IcebergDeletesRead.CachedDeletes(table));
    Written old = candidates.stream().filter(w -> liveRows.getOrDefault(w.file().location(), List.of()).size() >= 3).findFirst().orElseThrow();
    List<Record> rows = liveRows.get(old.file().location());
    String part = (String) old.rows().get(0).getField("part");
    List<Object[]> ids = List.of(new Object[] {rows.get(0).getField("id")}, new Object[] {rows.get(rows.size() - 1).getField("id")});
    table.newRowDelta().addDeletes(writeEquality(table.spec(), part, new String[] {"id"}, ids)).commit();
    Written rewritten = writeData(table.spec(), part, rows);
    table.newRewrite().validateFromSnapshot(start.snapshotId()).dataSequenceNumber(start.sequenceNumber()).deleteFile(old.file()).addFile(rewritten.file()).commit();
    compacted.add(old.file().location());
    live.remove(old);
    live.add(rewritten);
  }

  /** s10: the last spec-0 file deleted whole. */
  void dropWholeFile() {
    Written victim = null;
    for (Written w : live) if (w.file().specId() == 0) victim = w;
    table.newDelete().deleteFile(victim.file()).commit();
    live.remove(victim);
  }

  /** A data file written and never committed, as a writer that died before its commit leaves one. */
  void orphan() throws Exception {
    orphan = writeData(table.spec(), "c", rows("c", true)).file().location();
  }

  // ---- the summary ----

  ObjectNode summary() {
    ObjectMapper json = new ObjectMapper();
    ObjectNode out = json.createObjectNode();
    ArrayNode snapshots = out.putArray("snapshots");
    for (Snapshot s : table.snapshots()) {
      ObjectNode node = snapshots.addObject();
      node.put("id", String.valueOf(s.snapshotId()));
      node.put("operation", s.operation());
      node.put("sequence_number", s.sequenceNumber());
    }
    ObjectNode refs = out.putObject("refs");
    table.refs().forEach((name, ref) -> refs.put(name, String.valueOf(ref.snapshotId())));
    Map<String, Integer> counts = new TreeMap<>();
    Set<String> seen = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      for (DataFile f : s.addedDataFiles(table.io())) if (seen.add(f.location())) counts.merge("data", 1, Integer::sum);
      for (DeleteFile f : s.addedDeleteFiles(table.io())) if (seen.add(f.location())) counts.merge(f.content() == org.apache.iceberg.FileContent.EQUALITY_DELETES ? "equality_deletes" : "position_deletes", 1, Integer::sum);
    }
    ObjectNode countNode = out.putObject("files");
    counts.forEach(countNode::put);
    String prefix = table.location().replaceAll("/+$", "") + "/";
    ArrayNode unreachable = out.putArray("compacted");
    for (String location : compacted) unreachable.add(location.substring(prefix.length()));
    out.put("orphan", orphan.substring(prefix.length()));
    out.set("samples", samples(json));
    return out;
  }

  /** Per column, literals from the written rows (as the random filters take them), nulls and NaN among them. */
  ObjectNode samples(ObjectMapper json) {
    ObjectNode samples = json.createObjectNode();
    Random pick = new Random(7);
    for (Types.NestedField field : table.schema().columns()) {
      ArrayNode values = samples.putArray(field.name());
      for (int i = 0; i < 8; i++) {
        Written w = live.get(pick.nextInt(live.size()));
        Record r = w.rows().get(pick.nextInt(w.rows().size()));
        values.add(IcebergDeletesRead.literal(json, r.struct().field(field.name()) == null ? null : r.getField(field.name())));
      }
      values.addObject().put("type", "null");
      if (field.name().equals("price")) values.addObject().put("type", "number").put("text", "NaN");
    }
    return samples;
  }

  // ---- files named by the table's location ----

  /**
   * LocalCopyIO's files report their local path as their location, and Iceberg records a file's
   * location in the manifests it writes: this FileIO reports the path the table names instead
   * (s3://...), so every path in the table is under its location, as a writer on S3 leaves them.
   */
  static final class LocationIO implements FileIO {
    private final FileIO local;

    LocationIO(FileIO local) {
      this.local = local;
    }

    @Override
    public InputFile newInputFile(String path) {
      InputFile file = local.newInputFile(path);
      return new InputFile() {
        public long getLength() {
          return file.getLength();
        }

        public SeekableInputStream newStream() {
          return file.newStream();
        }

        public String location() {
          return path;
        }

        public boolean exists() {
          return file.exists();
        }
      };
    }

    @Override
    public OutputFile newOutputFile(String path) {
      OutputFile file = local.newOutputFile(path);
      return new OutputFile() {
        public PositionOutputStream create() {
          return file.create();
        }

        public PositionOutputStream createOrOverwrite() {
          return file.createOrOverwrite();
        }

        public String location() {
          return path;
        }

        public InputFile toInputFile() {
          return newInputFile(path);
        }
      };
    }

    @Override
    public void deleteFile(String path) {
      local.deleteFile(path);
    }
  }

  /** IcebergPeer's local files, with LocationIO as their FileIO. */
  record NamedFiles(IcebergPeer.TableFiles local, FileIO io) implements IcebergPeer.TableFiles {
    public String location() {
      return local.location();
    }

    public String key(String path) {
      return local.key(path);
    }

    public List<IcebergPeer.Listed> list(String prefix) throws java.io.IOException {
      return local.list(prefix);
    }

    public void deleteKeys(List<String> keys) throws java.io.IOException {
      local.deleteKeys(keys);
    }

    public void writeHint(int version) throws java.io.IOException {
      local.writeHint(version);
    }

    public List<String> deletedKeys() {
      return local.deletedKeys();
    }
  }
}
