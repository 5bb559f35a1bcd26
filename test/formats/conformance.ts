/**
 * The format conformance suite: what every registered TableFormat must do, checked on real
 * tables of that format. A format joins by calling `describeFormatConformance` from a test
 * file of its own with cases built from its real tables (LanceDB datasets; the Delta and
 * Iceberg fixtures). Nothing here knows a format.
 *
 * Each removal strategy has invariants of its own, checked on a real cleanup that removes
 * versions (every mutating request recorded in order):
 *   - commit-files-first: every removed version's commit file is deleted before any other file;
 *   - format-plan: the format's plan, asked directly, never deletes a file it keeps for a kept
 *     version, nor a kept version's commit file, and keeps everything the latest version reads;
 *   - metadata-commit: the removal commit is written before the first delete, and it applies on
 *     its base only (once the base is superseded, a commit on it is refused, nothing written);
 *   - all: no file a version still live after the run references was deleted.
 */
import { describe, expect, it } from "vitest";
import { UnresolvableReferenceError } from "../../lib/formats/errors.ts";
import { commitOfKey, TABLE_FORMATS } from "../../lib/formats/index.ts";
import type { RemovalInput, TableFormat, VersionFile } from "../../lib/formats/table-format.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { relativeKeyProblem } from "../../lib/model/table-path.ts";
import type { ObjectInfo, ObjectStore } from "../../lib/store/object-store.ts";

export interface ConformanceTable {
  /** A description for the test names. */
  name: string;
  /** A fresh copy of the table, safe to change. */
  open(): Promise<{ store: ObjectStore; dispose(): Promise<void> }>;
  /** True when every file a live version names must exist (false for tables written with files already vacuumed away). */
  complete: boolean;
  /** The format bound to the commit pointer a catalog owns, for a table only its catalog's word reads (default: the format itself). */
  reader?: TableFormat;
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

/** A store that records its mutating requests in order: a put once it is written, a delete when it is asked for. */
function recording(store: ObjectStore): { store: ObjectStore; log: { op: "put" | "delete"; key: string }[] } {
  const log: { op: "put" | "delete"; key: string }[] = [];
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "put") {
        return async (...args: Parameters<ObjectStore["put"]>) => {
          const result = await target.put(...args);
          log.push({ op: "put", key: args[0] });
          return result;
        };
      }
      if (prop === "deleteMany") {
        return (keys: readonly string[]) => {
          for (const key of keys) log.push({ op: "delete", key });
          return target.deleteMany(keys);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, log };
}

/** Old enough for every format's rules to let versions go; the run's clock is far ahead of the files'. */
const AGED = { settings: { olderThanMs: 86_400_000, retainVersions: 1, safetyWindowMs: 86_400_000 }, now: new Date(Date.now() + 400 * 86_400_000) };

async function listingOf(store: ObjectStore, format: TableFormat): Promise<ObjectInfo[]> {
  const listing: ObjectInfo[] = [];
  for (const prefix of format.managedPrefixes) for await (const object of store.list(prefix)) listing.push(object);
  return listing;
}

/** What a format that plans its own removal is given, built from the table as it is (as the pipeline builds it). */
async function removalInputOf(store: ObjectStore, format: TableFormat, latest: VersionFile): Promise<RemovalInput> {
  const versions = await Promise.all(
    (await format.listVersionFiles(store)).map(async (file) => ({ file, references: (await format.readForCleanup(store, file)).referencedFiles })),
  );
  return {
    listing: await listingOf(store, format),
    versions,
    latestAtStart: latest.version,
    now: AGED.now,
    policy: { olderThanMs: AGED.settings.olderThanMs, retainVersions: AGED.settings.retainVersions, protectBefore: null, safetyWindowMs: AGED.settings.safetyWindowMs },
    pinned: new Map(),
  };
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
      // Reads go through the reader; what the registry answers for a key is the format's own.
      const reader = table.reader ?? format;
      describe(table.name, () => {
        it("lists versions ascending, the latest last, each readable with its own id", async () => {
          const { store, dispose } = await table.open();
          const files = await reader.listVersionFiles(store);
          expect(files.length).toBeGreaterThan(0);
          for (let i = 1; i < files.length; i++) expect(files[i]!.version).toBeGreaterThan(files[i - 1]!.version);
          const latest = await reader.latestVersionFile(store);
          expect(latest?.version).toBe(files.at(-1)!.version);
          for (const file of files) {
            const snapshot = await reader.readSnapshot(store, file);
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
          const refs = await reader.readRefs(store);
          for (const tag of refs.tags) expect(Number.isSafeInteger(tag.version), tag.name).toBe(true);
          for (const branch of refs.branches) expect(Number.isSafeInteger(branch.parentVersion), branch.name).toBe(true);
          await dispose();
        });

        it("references are keys under the root that the format classifies, and (for a complete table) exist", async () => {
          const { store, dispose } = await table.open();
          const keys = new Set(await keysOf(store));
          for (const file of await reader.listVersionFiles(store)) {
            const snapshot = await reader.readSnapshot(store, file);
            expect(
              snapshot.unresolvedReferences.filter((r) => r.kind === "unresolvable"),
              file.key,
            ).toEqual([]);
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

    it(`removal "${format.removal.kind}": a cleanup that removes versions keeps the strategy's order, and deletes nothing a live version references`, async () => {
      const { store: inner, dispose } = await conformance.tables[0]!.open();
      const base = (await format.latestVersionFile(inner))!;
      const removal = format.removal;
      if (removal.kind === "format-plan") {
        const input = await removalInputOf(inner, format, base);
        const plan = await removal.planRemoval(inner, input);
        const deleted = new Set(plan.files.map((file) => file.key));
        expect(plan.decisions.map((d) => d.version)).toEqual(input.versions.map((v) => v.file.version));
        for (const decision of plan.decisions.filter((d) => d.keep)) {
          for (const reference of plan.kept.get(decision.version) ?? []) expect(deleted.has(reference.path), `${reference.path} (kept version ${decision.version})`).toBe(false);
          const commit = input.versions.find((v) => v.file.version === decision.version)!.file.key;
          expect(deleted.has(commit), commit).toBe(false);
        }
        const latest = input.versions.at(-1)!;
        for (const reference of latest.references) expect(deleted.has(reference.path), `${reference.path} (latest)`).toBe(false);
      }

      const { store, log } = recording(inner);
      const report = await runCleanup(store, { format, settings: AGED.settings, now: () => AGED.now });
      expect(report.versions_removed.length, "the table has versions to remove").toBeGreaterThan(0);
      const deletes = log.filter((entry) => entry.op === "delete").map((entry) => entry.key);
      const deleted = new Set(deletes);
      for (const file of await format.listVersionFiles(inner)) {
        for (const reference of (await format.readForCleanup(inner, file)).referencedFiles) {
          expect(deleted.has(reference.path), `${reference.path} (live version ${file.version})`).toBe(false);
        }
      }
      if (removal.kind === "commit-files-first") {
        const commits = deletes.flatMap((key, i) => (format.parseVersionKey(key) === null ? [] : [i]));
        const firstOther = deletes.findIndex((key) => format.parseVersionKey(key) === null);
        expect(commits.length).toBeGreaterThanOrEqual(report.versions_removed.length);
        if (firstOther !== -1) expect(Math.max(...commits)).toBeLessThan(firstOther);
      }
      if (removal.kind === "metadata-commit") {
        const commit = log.findIndex((entry) => entry.op === "put" && removal.committedAfter(entry.key, base));
        const firstDelete = log.findIndex((entry) => entry.op === "delete");
        expect(commit, "the removal commit").toBeGreaterThanOrEqual(0);
        if (firstDelete !== -1) expect(commit).toBeLessThan(firstDelete);
        const keys = await keysOf(inner);
        await expect(removal.commit(inner, { remove: [], base, now: AGED.now })).rejects.toThrow();
        expect(await keysOf(inner)).toEqual(keys);
      }
      await dispose();
    });

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
