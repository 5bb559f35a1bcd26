/** Iceberg joins the format conformance suite with the fixture tables written by Spark, Athena and Iceberg Java. */
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ObjectStore } from "../../../lib/store/object-store.ts";
import { makeTempDir, removeDir } from "../../support/lance-datasets.ts";
import { copyIcebergFixture, fixtureFormat, rewriteMetadata, type IcebergFixture } from "../../support/iceberg-fixtures.ts";
import { describeFormatConformance, type ConformanceTable } from "../conformance.ts";

const READABLE: readonly IcebergFixture[] = ["spark-bunnies", "athena-example", "spark-rename_column", "hive_partitioned_table", "legacy_v1"];

function table(name: IcebergFixture): ConformanceTable {
  return {
    name: `${name} (fixture)`,
    complete: true,
    // Athena's metadata files are catalog-named: read at the catalog's pointer only.
    reader: fixtureFormat(name),
    async open() {
      const copy = await copyIcebergFixture(name);
      return { store: new LocalStore(copy.dir), dispose: copy.remove };
    },
  };
}

describeFormatConformance({
  format: icebergFormat,
  tables: READABLE.map(table),
  async notThisFormat() {
    const empty = await makeTempDir("lw-conformance-empty-");
    return [{ store: new LocalStore(empty), dispose: () => removeDir(empty) }];
  },
  async breakLatestPath(store: ObjectStore) {
    const dir = new URL(store.uri).pathname;
    let path = "";
    // A statistics file of the current snapshot whose path climbs out and back in: inside the
    // location as written, but where it points depends on who resolves the "..".
    await rewriteMetadata(dir, (json) => {
      const location = String(json.location).replace(/\/+$/, "");
      path = `${location}/metadata/../metadata/stats-broken.puffin`;
      json.statistics = [{ "snapshot-id": json["current-snapshot-id"]!, "statistics-path": path, "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4, "blob-metadata": [] }];
    });
    return path;
  },
});
