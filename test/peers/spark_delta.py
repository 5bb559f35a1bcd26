"""Delta tables made and read by Spark with Delta (pyspark + delta-spark), the reference
implementation of the checkpointProtection writer feature, for test/peers/.

  python spark_delta.py make <table-dir>
      makes a table whose history crosses checkpointProtection's boundary: deletion vectors and
      V2 checkpoints (with sidecars) from the start, DELETEs that write deletion vectors,
      `ALTER TABLE ... DROP FEATURE deletionVectors` (Spark's fast drop: barrier checkpoints,
      then the feature gone and checkpointProtection in the protocol with
      delta.requireCheckpointProtectionBeforeVersion at the drop's version), more commits,
      `DROP FEATURE v2Checkpoint` (the boundary moves up), change data feed enabled after it (a
      protocol change above the boundary), more commits. Prints one JSON document: what each
      commit did, and the protocol and boundary after each drop.
  python spark_delta.py read <table-dir>[@<from>] ...
      for each table: the versions DESCRIBE HISTORY lists, then every one of them from <from>
      (default 0) read by time travel (VERSION AS OF), each with its row count and checksum or
      the error; one JSON document keyed by the arguments as given.

One JVM per call, local[1], small memory, no UI; the Delta jars come from Maven Central through
Spark's Ivy resolution (spark-ivysettings.xml) into LAKEWARDEN_IVY_DIR (the project's .tools/ivy),
so a second run is offline.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engines"))
from engine_rows import checksum  # noqa: E402

from delta import configure_spark_with_delta_pip  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402


def spark_session() -> SparkSession:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("lakewarden-peers")
        .config("spark.driver.memory", os.environ.get("LAKEWARDEN_SPARK_MEMORY", "768m"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        # Delta rebuilds each snapshot in 50 partitions by default: one core and a few files want one.
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.sql.adaptive.enabled", "false")
        # A short-lived JVM on a busy machine: the C1 compiler alone starts and warms faster.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.jars.ivy", os.environ["LAKEWARDEN_IVY_DIR"])
        # Maven Central alone, not ~/.m2 (what Maven left there can lack jars): spark-ivysettings.xml.
        .config("spark.jars.ivySettings", os.path.join(os.path.dirname(os.path.abspath(__file__)), "spark-ivysettings.xml"))
    )
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rows_of(df) -> dict:
    pairs = [(r["id"], r["value"]) for r in df.select("id", "value").collect()]
    return {"rows": len(pairs), "checksum": checksum([p[0] for p in pairs], [p[1] for p in pairs])}


def latest_version(spark: SparkSession, table: str) -> int:
    return int(spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").collect()[0]["version"])


def table_state(spark: SparkSession, table: str) -> dict:
    detail = spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]
    props = detail["properties"] or {}
    return {
        "version": latest_version(spark, table),
        "readerFeatures": sorted(detail["tableFeatures"] or []),
        "minWriterVersion": detail["minWriterVersion"],
        "boundary": int(props.get("delta.requireCheckpointProtectionBeforeVersion", "0")),
    }


def make(path: str) -> dict:
    spark = spark_session()
    table = f"delta.`{path}`"
    events: list[dict] = []

    def record(what: str) -> None:
        events.append({"version": latest_version(spark, table), "what": what})

    def insert(first: int, count: int, commit: int) -> None:
        spark.sql(f"INSERT INTO {table} SELECT id, (id * 31 + {commit} * 1000003) % 2147483647 AS value, CAST(id % 4 AS INT) AS part FROM range({first}, {first + count})")
        record(f"insert {first}..{first + count - 1}")

    spark.sql(
        f"CREATE TABLE {table} (id BIGINT, value BIGINT, part INT) USING delta TBLPROPERTIES ("
        "'delta.enableDeletionVectors' = 'true', 'delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '3')"
    )
    record("create")
    commit = 1
    next_id = 0
    for _ in range(3):
        insert(next_id, 50, commit)
        next_id += 50
        commit += 1
    spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0")
    record("delete (deletion vectors)")
    spark.sql(f"UPDATE {table} SET value = value + 1 WHERE id % 5 = 0")
    record("update (deletion vectors)")
    spark.sql(f"ALTER TABLE {table} DROP FEATURE deletionVectors")
    record("drop feature deletionVectors")
    events[-1]["state"] = table_state(spark, table)
    for _ in range(2):
        insert(next_id, 30, commit)
        next_id += 30
        commit += 1
    spark.sql(f"DELETE FROM {table} WHERE id % 11 = 0")
    record("delete (file rewrite)")
    spark.sql(f"ALTER TABLE {table} DROP FEATURE v2Checkpoint")
    record("drop feature v2Checkpoint")
    events[-1]["state"] = table_state(spark, table)
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    record("enable change data feed")
    for _ in range(3):
        insert(next_id, 20, commit)
        next_id += 20
        commit += 1
    final = table_state(spark, table)
    spark.stop()
    return {"events": events, "final": final}


def read(targets: list[str]) -> dict:
    spark = spark_session()
    # The tests date the log back 40 days to stand for days passing; Spark would refuse time travel
    # to those commits for being older than the VACUUM retention, though their data files are all there.
    spark.conf.set("spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration", "false")
    out = {}
    for target in targets:
        path, _, start = target.partition("@")
        table = f"delta.`{path}`"
        doc: dict = {"history": [], "versions": {}}
        try:
            doc["history"] = sorted(int(r["version"]) for r in spark.sql(f"DESCRIBE HISTORY {table}").collect())
        except Exception as error:  # noqa: BLE001 - reported to the test, which fails on it
            doc["error"] = first_line(error)
        for version in (v for v in doc["history"] if v >= int(start or 0)):
            try:
                doc["versions"][str(version)] = rows_of(spark.read.format("delta").option("versionAsOf", version).load(path))
            except Exception as error:  # noqa: BLE001
                doc["versions"][str(version)] = {"error": first_line(error)}
        out[target] = doc
    spark.stop()
    return out


def first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:400]


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    result = make(args[0]) if command == "make" else read(args)
    print(json.dumps(result))
