/**
 * The Lance reader must work when esbuild bundles it into a Lambda: no .proto file is read
 * at run time, and 64-bit values stay exact (protobufjs needs long.js inside the bundle).
 * The options mirror infra/function-bundling.ts (ESM, node22, module-first, require banner).
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeManifestFile } from "../../../lib/formats/lance/manifest-file.ts";
import { toLanceManifest } from "../../../lib/formats/lance/manifest-model.ts";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { openStore } from "../../../lib/store/index.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../../support/lance-datasets.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-bundle-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "db"),
    steps: [
      { op: "create", rows: 10 },
      { op: "delete", where: "id = 3" },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

describe("the Lance reader bundled by esbuild", () => {
  it("decodes a real manifest exactly as the sources do, from a folder with no node_modules", async () => {
    const outfile = join(dir, "out", "reader.mjs");
    await build({
      stdin: {
        contents: ['export { decodeManifestFile } from "./lib/formats/lance/manifest-file.ts";', 'export { toLanceManifest } from "./lib/formats/lance/manifest-model.ts";'].join(
          "\n",
        ),
        resolveDir: REPO_ROOT,
        sourcefile: "entry.ts",
        loader: "ts",
      },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      mainFields: ["module", "main"],
      minify: true,
      outfile,
      banner: { js: "import{createRequire as __lwCreateRequire}from'node:module';const require=__lwCreateRequire(import.meta.url);" },
      logLevel: "silent",
    });
    const bundled = (await import(pathToFileURL(outfile).href)) as {
      decodeManifestFile: typeof decodeManifestFile;
      toLanceManifest: typeof toLanceManifest;
    };

    const latest = (await lanceFormat.latestVersionFile(openStore(dataset.tableUri)))!;
    const bytes = new Uint8Array(await readFile(join(dataset.tableUri, latest.key)));
    const fromBundle = bundled.toLanceManifest(bundled.decodeManifestFile(bytes, "m"), "m");
    const fromSources = toLanceManifest(decodeManifestFile(bytes, "m"), "m");
    expect(fromBundle).toEqual(fromSources);
    // Deletion file ids are random u64s (nearly always above 2^53): exact only with long.js.
    // The file Lance wrote is named with the id, so the name is the reference.
    const deletion = fromBundle.fragments.find((f) => f.deletionFile)!.deletionFile!;
    const [deletionFileName] = await readdir(join(dataset.tableUri, "_deletions"));
    expect(typeof deletion.id).toBe("bigint");
    expect(deletionFileName).toBe(`0-${deletion.readVersion}-${deletion.id}.${deletion.suffix}`);
  });
});
