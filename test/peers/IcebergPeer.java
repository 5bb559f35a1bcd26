/*
 * The Iceberg peer: iceberg-core 1.10.0's own ExpireSnapshots on a copy of a table, then the file set
 * iceberg-core reaches from what is left held against the table's listing, as Spark's
 * DeleteOrphanFiles action does (iceberg-core has no orphan action of its own; the reachable set is
 * built with the same iceberg-core calls the action's reachability uses). One JVM runs every job of
 * a test file: `java IcebergPeer jobs.json` prints one JSON document with a result per job.
 *
 * The tables name their files under the writer's location (s3a://..., s3://...): LocalCopyIO maps
 * that location onto the local copy, so Java reads and deletes the copy's files and nothing else.
 * A job with `s3` (the side-by-side benchmark on emulated S3) runs on the table where it is,
 * through iceberg-aws's S3FileIO (IcebergS3Files.java, whose jars only the benchmark installs).
 * The table is opened through CopyTableOperations (the metadata file the job names; a commit writes
 * the next vN.metadata.json and the version hint, as Hadoop tables and the Spark writer of these
 * fixtures do), so no catalog of the job's own is needed.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionStatisticsFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.io.OutputFile;

public class IcebergPeer {
  public static void main(String[] args) throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode jobs = json.readTree(new File(args[0]));
    ArrayNode out = json.createArrayNode();
    for (JsonNode job : jobs) {
      ObjectNode result = out.addObject();
      result.put("id", job.get("id").asText());
      try {
        run(job, result);
      } catch (Exception e) {
        result.put("error", e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n")[0]);
      }
    }
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(out));
  }

  static void run(JsonNode job, ObjectNode result) throws Exception {
    TableFiles files = job.has("s3") ? s3Files(job) : LocalFiles.open(Paths.get(job.get("dir").asText()), job.get("metadata").asText());
    String metadataPath = files.location() + "/metadata/" + job.get("metadata").asText();
    CopyTableOperations ops = new CopyTableOperations(files, TableMetadataParser.read(files.io(), metadataPath));
    Table table = new BaseTable(ops, "peer.copy");

    Set<String> before = snapshotIds(table);
    long started = System.nanoTime();
    // No deleteWith: iceberg-core deletes through the FileIO as it would by default (S3FileIO in bulk), and the FileIO records the keys.
    ExpireSnapshots expire = table.expireSnapshots();
    if (job.hasNonNull("expireOlderThanMs")) expire = expire.expireOlderThan(job.get("expireOlderThanMs").asLong());
    if (job.hasNonNull("retainLast")) expire = expire.retainLast(job.get("retainLast").asInt());
    expire.commit();
    table.refresh();
    Set<String> after = snapshotIds(table);
    Set<String> expired = new TreeSet<>(before);
    expired.removeAll(after);
    Set<String> expireDeleted = new TreeSet<>(files.deletedKeys());
    result.put("expire_ms", (System.nanoTime() - started) / 1_000_000);

    Set<String> reachable = reachableKeys(table, ops, files);
    long orphanCutoff = job.get("orphanOlderThanMs").asLong();
    List<String> orphans = new ArrayList<>();
    for (Listed file : files.list("")) {
      if (reachable.contains(file.key()) || ops.written.contains(file.key()) || hidden(file.key())) continue;
      if (file.modifiedMs() >= orphanCutoff) continue;
      orphans.add(file.key());
    }
    if (job.path("deleteOrphans").asBoolean(true)) files.deleteKeys(orphans);

    result.set("snapshots_before", strings(result, before));
    result.set("expired", strings(result, expired));
    result.set("expire_deleted", strings(result, expireDeleted));
    result.set("orphans", strings(result, orphans));
    result.set("peer_written", strings(result, ops.written));
    ObjectNode refs = result.putObject("refs_after");
    ops.current().refs().forEach((name, ref) -> refs.put(name, String.valueOf(ref.snapshotId())));
  }

  /** IcebergS3Files, by name: its jars (test/peers/iceberg-s3/pom.xml) are on the benchmark's class path only. */
  static TableFiles s3Files(JsonNode job) throws Exception {
    return (TableFiles) Class.forName("IcebergS3Files").getMethod("open", JsonNode.class).invoke(null, job.get("s3"));
  }

  /** A table's files as the peer reaches them: where the table is, its FileIO, its listing and deletes. */
  interface TableFiles {
    /** The location the table's metadata names, without a trailing "/". */
    String location();

    FileIO io();

    /** The table-relative key of a path the table names; a path outside the table is refused. */
    String key(String path);

    /** Every file whose key starts with `prefix`, with its modification time. */
    List<Listed> list(String prefix) throws IOException;

    void deleteKeys(List<String> keys) throws IOException;

    /** Writes `metadata/version-hint.text`. */
    void writeHint(int version) throws IOException;

    /** The keys the FileIO deleted so far. */
    List<String> deletedKeys();
  }

  record Listed(String key, long modifiedMs) {}

  /**
   * What the table still reaches, as table-relative keys: every metadata file of the log and the
   * version hint, statistics files, and per snapshot its manifest list, manifests and their live
   * data and delete files (ReachableFileUtil's sets and the all_manifests content Spark reads).
   */
  static Set<String> reachableKeys(Table table, CopyTableOperations ops, TableFiles files) throws IOException {
    FileIO io = files.io();
    Set<String> keys = new TreeSet<>();
    TableMetadata current = ops.current();
    keys.add(files.key(current.metadataFileLocation()));
    for (TableMetadata.MetadataLogEntry entry : current.previousFiles()) keys.add(files.key(entry.file()));
    keys.add("metadata/version-hint.text");
    for (StatisticsFile stats : current.statisticsFiles()) keys.add(files.key(stats.path()));
    for (PartitionStatisticsFile stats : current.partitionStatisticsFiles()) keys.add(files.key(stats.path()));
    for (Snapshot snapshot : table.snapshots()) {
      if (snapshot.manifestListLocation() != null) keys.add(files.key(snapshot.manifestListLocation()));
      for (ManifestFile manifest : snapshot.allManifests(io)) {
        keys.add(files.key(manifest.path()));
        try (ManifestReader<? extends ContentFile<?>> reader =
            manifest.content() == ManifestContent.DATA ? ManifestFiles.read(manifest, io, table.specs()) : ManifestFiles.readDeleteManifest(manifest, io, table.specs())) {
          for (ContentFile<?> file : reader) keys.add(files.key(file.location()));
        }
      }
    }
    return keys;
  }

  /**
   * Spark's DeleteOrphanFiles lists through its hidden-path filter: a file or folder named with a
   * leading `_` or `.` is not listed (Hadoop's .crc files among them), except `_`-named partition folders.
   */
  static boolean hidden(String key) {
    for (String segment : key.split("/")) {
      if (segment.startsWith(".")) return true;
      if (segment.startsWith("_") && !segment.contains("=")) return true;
    }
    return false;
  }

  static Set<String> snapshotIds(Table table) {
    Set<String> ids = new TreeSet<>();
    for (Snapshot snapshot : table.snapshots()) ids.add(String.valueOf(snapshot.snapshotId()));
    return ids;
  }

  static ArrayNode strings(ObjectNode owner, Iterable<String> values) {
    ArrayNode array = owner.arrayNode();
    for (String value : values) array.add(value);
    return array;
  }

  /** A FileIO over the local copy: paths under the writer's location map into the copy's folder. */
  static final class LocalCopyIO implements FileIO {
    private final String location;
    private final Path dir;
    final List<String> deleted = new ArrayList<>();

    LocalCopyIO(String location, Path dir) {
      this.location = location == null ? null : location.replaceAll("/+$", "");
      this.dir = dir;
    }

    /** The table-relative key of a path the table names; a path outside the table is refused. */
    String key(String path) {
      if (location != null && path.startsWith(location + "/")) return path.substring(location.length() + 1);
      String local = path.replaceFirst("^file:(//)?", "");
      Path p = Paths.get(local).normalize();
      if (p.startsWith(dir)) return dir.relativize(p).toString().replace(File.separatorChar, '/');
      throw new IllegalArgumentException("path outside the table: " + path);
    }

    private File file(String path) {
      return dir.resolve(key(path)).toFile();
    }

    @Override
    public InputFile newInputFile(String path) {
      return org.apache.iceberg.Files.localInput(file(path));
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return org.apache.iceberg.Files.localOutput(file(path));
    }

    @Override
    public void deleteFile(String path) {
      File f = file(path);
      if (f.exists() && !f.delete()) throw new IllegalStateException("could not delete " + path);
      deleted.add(key(path));
    }

    @Override
    public Map<String, String> properties() {
      return Map.of();
    }
  }

  /** A local copy: LocalCopyIO over its folder, the folder walked for its listing. */
  static final class LocalFiles implements TableFiles {
    private final LocalCopyIO io;
    private final Path dir;
    private final String location;

    private LocalFiles(LocalCopyIO io, Path dir, String location) {
      this.io = io;
      this.dir = dir;
      this.location = location;
    }

    static LocalFiles open(Path dir, String metadataName) {
      String metadataFile = dir.resolve("metadata").resolve(metadataName).toString();
      String location = TableMetadataParser.read(new LocalCopyIO(null, dir), metadataFile).location().replaceAll("/+$", "");
      return new LocalFiles(new LocalCopyIO(location, dir), dir, location);
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public FileIO io() {
      return io;
    }

    @Override
    public String key(String path) {
      return io.key(path);
    }

    @Override
    public List<Listed> list(String prefix) throws IOException {
      List<Listed> listed = new ArrayList<>();
      // A folder prefix walks that folder only (the commit's look at metadata/ stays cheap on a big table).
      Path start = prefix.endsWith("/") ? dir.resolve(prefix) : dir;
      if (!Files.isDirectory(start)) return listed;
      try (Stream<Path> files = Files.walk(start)) {
        for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
          String key = dir.relativize(file).toString().replace(File.separatorChar, '/');
          if (key.startsWith(prefix)) listed.add(new Listed(key, Files.getLastModifiedTime(file).toMillis()));
        }
      }
      return listed;
    }

    @Override
    public void deleteKeys(List<String> keys) throws IOException {
      for (String key : keys) Files.delete(dir.resolve(key));
    }

    @Override
    public void writeHint(int version) throws IOException {
      Files.writeString(dir.resolve("metadata/version-hint.text"), String.valueOf(version), StandardCharsets.UTF_8);
    }

    @Override
    public List<String> deletedKeys() {
      return io.deleted;
    }
  }

  /** The copy's table, opened from one metadata file; a commit writes vN+1.metadata.json and the hint. */
  static final class CopyTableOperations implements TableOperations {
    private static final java.util.regex.Pattern METADATA = java.util.regex.Pattern.compile("^metadata/v(\\d+)\\.metadata\\.json$");
    private final TableFiles files;
    private TableMetadata current;
    final Set<String> written = new TreeSet<>();

    CopyTableOperations(TableFiles files, TableMetadata current) {
      this.files = files;
      this.current = current;
    }

    @Override
    public TableMetadata current() {
      return current;
    }

    @Override
    public TableMetadata refresh() {
      return current;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (base != current) throw new IllegalStateException("concurrent commit");
      // As BaseMetastoreTableOperations: an unchanged table is not committed (no new metadata file).
      if (base == metadata) return;
      try {
        int version = nextVersion();
        String key = "metadata/v" + version + ".metadata.json";
        String path = files.location() + "/" + key;
        TableMetadataParser.write(metadata, files.io().newOutputFile(path));
        files.writeHint(version);
        written.add(key);
        current = TableMetadataParser.read(files.io(), path);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }

    private int nextVersion() throws IOException {
      int max = 0;
      for (Listed file : files.list("metadata/")) {
        var m = METADATA.matcher(file.key());
        if (m.matches()) max = Math.max(max, Integer.parseInt(m.group(1)));
      }
      return max + 1;
    }

    @Override
    public FileIO io() {
      return files.io();
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return files.location() + "/metadata/" + fileName;
    }

    @Override
    public LocationProvider locationProvider() {
      return LocationProviders.locationsFor(current.location(), current.properties());
    }
  }
}
