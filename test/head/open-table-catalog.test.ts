/**
 * `openTable(location, { catalog })`: the handle reads the metadata file the catalog names and
 * follows the entry on every check, never the newest file on storage (which may be a commit the
 * catalog refused). A copy of the athena-example fixture with two commits appended as a catalog
 * writer names them; the Glue entry (moto's Glue, through the real SDK) names one of them.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { GlueCatalog } from "../../lib/catalog/glue.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { appendCatalogCommits, athenaCatalogFiles } from "../support/catalog-commits.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { copyIcebergFixture } from "../support/iceberg-fixtures.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";

let moto: MotoHandle;
let glue: GlueServer;
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMotoServer();
  glue = await startGlueServer(moto);
  Object.assign(process.env, { AWS_ENDPOINT_URL_GLUE: glue.endpoint, AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" });
});

afterAll(async () => {
  process.env = savedEnv;
  await glue?.stop();
  await moto?.stop();
});

describe("openTable with a catalog", () => {
  it("loads the file the catalog names, not the newest one, and follows the entry when it moves", async () => {
    const copy = await copyIcebergFixture("athena-example");
    onTestFinished(copy.remove);
    const files = athenaCatalogFiles();
    await appendCatalogCommits(copy.dir, files);
    const point = (name: string) =>
      glue.setTable("sales", "open_table", {
        tableType: "EXTERNAL_TABLE",
        parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(copy.dir, "metadata", name)).href },
      });
    await point(files.SECOND);

    const catalog = new GlueCatalog().tableCatalog({ database: "sales", table: "open_table" });
    const asked = glue.requests.length;
    const handle = await openTable(copy.dir, { catalog, versionCheckInterval: 0 });
    expect(glue.requests.length - asked).toBe(1);
    const first = await handle.latest();
    expect(first.version).toBe(2);
    expect(first.snapshot.versionFile.key).toBe(`metadata/${files.SECOND}`);

    await point(files.THIRD);
    const moved = await handle.latest();
    expect(moved.version).toBe(3);
    expect(moved.snapshot.versionFile.key).toBe(`metadata/${files.THIRD}`);
    expect(handle.format.name).toBe("iceberg");
  });

  it("a head is used only when written for the catalog's pointer: one of the newest file, which the catalog has not taken, is dropped", async () => {
    const copy = await copyIcebergFixture("athena-example");
    onTestFinished(copy.remove);
    const files = athenaCatalogFiles();
    await appendCatalogCommits(copy.dir, files);
    await glue.setTable("sales", "open_table_head", {
      tableType: "EXTERNAL_TABLE",
      parameters: { table_type: "ICEBERG", metadata_location: pathToFileURL(join(copy.dir, "metadata", files.SECOND)).href },
    });
    const catalog = new GlueCatalog().tableCatalog({ database: "sales", table: "open_table_head" });
    const store = new LocalStore(copy.dir);

    // Written for the newest file, a commit the catalog never took (as a reader without the catalog
    // wrote it before readers refused such a table, or one given the wrong pointer).
    await writeTableHead(store, { format: icebergFormat.at!(`metadata/${files.THIRD}`) });
    const dropped = await (await openTable(store, { catalog })).latest();
    expect(dropped.source).toBe("manifest");
    expect(dropped.warning?.reason).toBe("head-ahead");
    expect(dropped.snapshot.versionFile.key).toBe(`metadata/${files.SECOND}`);

    // Written for the catalog's pointer (the newer head removed first: a head never moves back): used,
    // its file's HEAD the only check beside the head's GET.
    await rm(join(copy.dir, "_lakewarden/head"));
    await writeTableHead(store, { format: icebergFormat.at!(`metadata/${files.SECOND}`) });
    const keys: string[] = [];
    const get = store.get.bind(store);
    store.get = (key, range) => {
      keys.push(key);
      return get(key, range);
    };
    const used = await (await openTable(store, { catalog })).latest();
    expect(used).toMatchObject({ source: "head", warning: null, version: 2 });
    expect(used.snapshot.versionFile.key).toBe(`metadata/${files.SECOND}`);
    expect(keys.filter((key) => key.endsWith(".metadata.json"))).toEqual([]);
  });
});
