/**
 * The format conformance suite: what every registered TableFormat must do, checked on real
 * tables of that format. A format joins by calling `describeFormatConformance` from a test
 * file of its own with cases built from its real tables (LanceDB datasets; the Delta and
 * Iceberg fixtures). Nothing here knows a format.
 */
import { describe, expect, it } from "vitest";
import { UnresolvableReferenceError } from "../../lib/formats/errors.ts";
import { commitOfKey, TABLE_FORMATS } from "../../lib/formats/index.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { relativeKeyProblem } from "../../lib/model/table-path.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";

export interface ConformanceTable {
  /** A description for the test names. */
  name: string;
  /** A fresh copy of the table, safe to change. */
  open(): Promise<{ store: ObjectStore; dispose(): Promise<void> }>;
  /** True when every file a live version names must exist (false for tables written with files already vacuumed away). */
  complete: boolean;
}

export interface ConformanceCase {
  format: TableFormat;
  tables: ConformanceTable[];
  /** An empty folder and tables of other formats: detect must say no. */
  notThisFormat(): Promise<{ store: ObjectStore; dispose(): Promise<void> }[]>;
  /**
   * Rewrites the table so its latest (always kept) version names a path that is inside the
   * root but cannot be resolved; returns that path. Cleanup must stop before any delete.
   */
  breakLatestPath(store: ObjectStore): Promise<string>;
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list("")) keys.push(object.key);
  return keys.sort();
}

export function describeFormatConformance(conformance: ConformanceCase): void {
  const { format } = conformance;

  describe(`format conformance: ${format.name}`, () => {
    it("is registered under its name", () => {
      expect(TABLE_FORMATS.filter((f) => f.name === format.name)).toEqual([format]);
    });

    it("detects its own tables and nothing else", async () => {
      for (const table of conformance.tables) {
        const { store, dispose } = await table.open();
        expect(await format.detect(store), table.name).toBe(true);
        await dispose();
      }
      for (const other of await conformance.notThisFormat()) {
        expect(await format.detect(other.store), other.store.uri).toBe(false);
        await other.dispose();
      }
    });

    for (const table of conformance.tables) {
      describe(table.name, () => {
        it("lists versions ascending, the latest last, each readable with its own id", async () => {
          const { store, dispose } = await table.open();
          const files = await format.listVersionFiles(store);
          expect(files.length).toBeGreaterThan(0);
          for (let i = 1; i < files.length; i++) expect(files[i]!.version).toBeGreaterThan(files[i - 1]!.version);
          const latest = await format.latestVersionFile(store);
          expect(latest?.version).toBe(files.at(-1)!.version);
          for (const file of files) {
            const snapshot = await format.readSnapshot(store, file);
            expect(snapshot.record.version).toBe(file.version);
            expect(typeof snapshot.record.version_id).toBe("string");
            expect(snapshot.record.version_id).toBe(file.id ?? String(file.version));
            expect(Number.isSafeInteger(snapshot.record.timestamp_millis)).toBe(true);
            // A commit file per version names its version; a metadata file that holds several
            // versions (Iceberg snapshots) names none of them.
            expect(format.parseVersionKey(file.key)).toBe(format.removal.kind === "metadata-commit" ? null : file.version);
            // The commit trigger finds the table and the format from the key alone.
            expect(format.tableRootOfCommitKey(`lake/t/${file.key}`)).toBe("lake/t");
            expect(commitOfKey(`lake/t/${file.key}`)?.format).toBe(format);
          }
          await dispose();
        });

        it("refs point at versions of the table", async () => {
          const { store, dispose } = await table.open();
          const refs = await format.readRefs(store);
          for (const tag of refs.tags) expect(Number.isSafeInteger(tag.version), tag.name).toBe(true);
          for (const branch of refs.branches) expect(Number.isSafeInteger(branch.parentVersion), branch.name).toBe(true);
          await dispose();
        });

        it("references are keys under the root that the format classifies, and (for a complete table) exist", async () => {
          const { store, dispose } = await table.open();
          const keys = new Set(await keysOf(store));
          for (const file of await format.listVersionFiles(store)) {
            const snapshot = await format.readSnapshot(store, file);
            expect(snapshot.unresolvedReferences.filter((r) => r.kind === "unresolvable"), file.key).toEqual([]);
            for (const reference of snapshot.referencedFiles) {
              expect(relativeKeyProblem(reference.path), reference.path).toBeNull();
              if (!table.complete) continue;
              const exists = reference.path.endsWith("/") ? [...keys].some((k) => k.startsWith(reference.path)) : keys.has(reference.path);
              expect(exists, `${reference.path} (version ${file.version})`).toBe(true);
              if (!reference.path.endsWith("/")) expect(format.classify(reference.path), reference.path).not.toBeNull();
            }
          }
          await dispose();
        });
      });
    }

    it("cleanup fails closed on a kept version's unresolvable path: stops before any delete, naming path and version", async () => {
      const { store, dispose } = await conformance.tables[0]!.open();
      const path = await conformance.breakLatestPath(store);
      const before = await keysOf(store);
      const run = runCleanup(store, { format, settings: { olderThanMs: 0 }, now: () => new Date(Date.now() + 60_000) });
      await expect(run).rejects.toThrow(UnresolvableReferenceError);
      await expect(run).rejects.toThrow(JSON.stringify(path));
      const after = (await keysOf(store)).filter((key) => !key.startsWith("_lakewarden/"));
      expect(after).toEqual(before.filter((key) => !key.startsWith("_lakewarden/")));
      await dispose();
    });
  });
}
