/*
 * The Iceberg peer on S3 (IcebergPeer's TableFiles): the table where its metadata says it is,
 * read, written and deleted through iceberg-aws's own S3FileIO, as iceberg-core runs on S3. The
 * job's `s3` says where: {"location": "s3://bucket/prefix/t", "endpoint", "region", "accessKeyId",
 * "secretAccessKey"}; path-style requests, the URL-connection HTTP client. S3FileIO deletes in
 * bulk (DeleteObjects), which iceberg-core's ExpireSnapshots uses when no deleteWith is set; the
 * wrapper below only records the keys it is asked to delete.
 */
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SupportsBulkOperations;

public final class IcebergS3Files implements IcebergPeer.TableFiles {
  private final String location;
  private final RecordingS3IO io;

  private IcebergS3Files(String location, RecordingS3IO io) {
    this.location = location;
    this.io = io;
  }

  public static IcebergS3Files open(JsonNode s3) {
    S3FileIO fileIO = new S3FileIO();
    fileIO.initialize(
        Map.of(
            "s3.endpoint", s3.get("endpoint").asText(),
            "s3.path-style-access", "true",
            "s3.access-key-id", s3.get("accessKeyId").asText(),
            "s3.secret-access-key", s3.get("secretAccessKey").asText(),
            "client.region", s3.get("region").asText(),
            "http-client.type", "urlconnection"));
    String location = s3.get("location").asText().replaceAll("/+$", "");
    return new IcebergS3Files(location, new RecordingS3IO(fileIO, location));
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
    if (path.startsWith(location + "/")) return path.substring(location.length() + 1);
    throw new IllegalArgumentException("path outside the table: " + path);
  }

  @Override
  public List<IcebergPeer.Listed> list(String prefix) {
    List<IcebergPeer.Listed> listed = new ArrayList<>();
    for (FileInfo file : io.s3.listPrefix(location + "/" + prefix)) listed.add(new IcebergPeer.Listed(key(file.location()), file.createdAtMillis()));
    return listed;
  }

  @Override
  public void deleteKeys(List<String> keys) {
    List<String> paths = new ArrayList<>();
    for (String key : keys) paths.add(location + "/" + key);
    io.s3.deleteFiles(paths);
  }

  @Override
  public void writeHint(int version) {
    OutputFile hint = io.newOutputFile(location + "/metadata/version-hint.text");
    try (PositionOutputStream out = hint.createOrOverwrite()) {
      out.write(String.valueOf(version).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Override
  public List<String> deletedKeys() {
    return io.deleted;
  }

  /** S3FileIO, recording the table-relative keys of what it deletes. */
  static final class RecordingS3IO implements FileIO, SupportsBulkOperations {
    final S3FileIO s3;
    private final String location;
    final List<String> deleted = new ArrayList<>();

    RecordingS3IO(S3FileIO s3, String location) {
      this.s3 = s3;
      this.location = location;
    }

    private void record(String path) {
      synchronized (deleted) {
        deleted.add(path.startsWith(location + "/") ? path.substring(location.length() + 1) : path);
      }
    }

    @Override
    public InputFile newInputFile(String path) {
      return s3.newInputFile(path);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return s3.newOutputFile(path);
    }

    @Override
    public void deleteFile(String path) {
      s3.deleteFile(path);
      record(path);
    }

    @Override
    public void deleteFiles(Iterable<String> paths) throws BulkDeletionFailureException {
      List<String> all = new ArrayList<>();
      paths.forEach(all::add);
      s3.deleteFiles(all);
      all.forEach(this::record);
    }

    @Override
    public Map<String, String> properties() {
      return s3.properties();
    }

    @Override
    public void close() {
      s3.close();
    }
  }
}
