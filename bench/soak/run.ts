/**
 * `npm run soak -- [--minutes N] [--store local|s3]`: lakewarden's safety under a live writer.
 *
 * In one process, for the given minutes: a LanceDB writer commits in a loop (bench/soak/writer.ts);
 * the head is written after commits (head-follower.ts); readers load the latest version through
 * LanceDB and through openTable (readers.ts); cleanup runs round after round with older-than 0s
 * and retain 1-3, with a second cleaner contending for the lease (cleaner.ts); after each round
 * the invariants are checked under the lease (invariants.ts). Then the writer stops, a last
 * cleanup and check run, and the summary is printed and written to the results file.
 *
 * On S3 the table lives on fauxqs started in this process. lakewarden's store goes through
 * withS3ConditionalSemantics (fauxqs ignores If-None-Match / If-Match); LanceDB talks to fauxqs
 * directly, which is safe with its single writer here. The CLI cleanup rounds run on local disk
 * only: a child process would bypass this process's conditional semantics, and its lease would
 * not exclude anyone on fauxqs.
 *
 * Exit code: 0 when no invariant was violated, 1 otherwise, 2 on bad arguments.
 */
import { join } from "node:path";
import { describeMachine } from "../harness/machine.ts";
import type { CleanupReport } from "../../lib/maintenance/cleanup-report.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import type { ObjectStore } from "../../lib/store/object-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { withS3ConditionalSemantics } from "../../test/support/s3-semantics-store.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { runLakewarden } from "../../test/cli/run-executable.ts";
import { startFauxqsServer, type FauxqsHandle } from "../../test/support/fauxqs.ts";
import { makeTempDir, removeDir } from "../../test/support/lance-datasets.ts";
import { SoakCleaner } from "./cleaner.ts";
import { HeadFollower } from "./head-follower.ts";
import { Random, SoakHistory } from "./history.ts";
import { InvariantChecker } from "./invariants.ts";
import { SoakUsageError, parseSoakOptions, type SoakOptions } from "./options.ts";
import { SoakReaders } from "./readers.ts";
import { summaryLines, writeResults, type SoakSummary } from "./report.ts";
import { Violations } from "./violations.ts";
import { SoakWriter } from "./writer.ts";

interface SoakTable {
  dbUri: string;
  tableUri: string;
  store: ObjectStore;
  storageOptions?: Record<string, string>;
  /** Environment for the CLI child processes. */
  cliEnv: Record<string, string>;
  close(): Promise<void>;
}

async function localTable(options: SoakOptions): Promise<SoakTable> {
  const dbUri = await makeTempDir("lakewarden-soak-");
  const tableUri = join(dbUri, "t.lance");
  return {
    dbUri,
    tableUri,
    store: openStore(tableUri),
    cliEnv: {},
    async close() {
      if (options.keep) process.stdout.write(`table kept at ${tableUri}\n`);
      else await removeDir(dbUri);
    },
  };
}

async function s3Table(): Promise<SoakTable> {
  const fauxqs: FauxqsHandle = await startFauxqsServer({ buckets: ["soak"] });
  const dbUri = "s3://soak/db";
  const tableUri = `${dbUri}/t.lance`;
  const store = withS3ConditionalSemantics(openStore(tableUri, { s3: { endpoint: fauxqs.endpoint, region: fauxqs.region, credentials: fauxqs.credentials } }));
  return { dbUri, tableUri, store, storageOptions: fauxqs.lanceStorageOptions, cliEnv: fauxqs.awsEnv, close: () => fauxqs.stop() };
}

async function main(): Promise<number> {
  let options: SoakOptions;
  try {
    options = parseSoakOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof SoakUsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  const command = `npm run soak -- --minutes ${options.minutes} --store ${options.store} --seed ${options.seed}`;
  process.stdout.write(`${command}\n`);
  const table = options.store === "s3" ? await s3Table() : await localTable(options);
  const startedAt = new Date();
  const deadline = startedAt.getTime() + options.minutes * 60_000;
  let writerDone = false;
  const shouldStop = (): boolean => writerDone || Date.now() >= deadline;

  const history = new SoakHistory();
  const violations = new Violations();
  const removed = new Set<number>();
  const archived = new Set<number>();
  const random = new Random(options.seed);
  const head = new HeadFollower(table.store);
  const writer = new SoakWriter({
    dbUri: table.dbUri,
    ...(table.storageOptions ? { storageOptions: table.storageOptions } : {}),
    history,
    random: new Random(options.seed + 1),
    onCommit: () => head.notify(),
    shouldStop,
  });

  const cli = async (args: string[]): Promise<unknown> => {
    const result = await runLakewarden(args, table.cliEnv);
    if (result.code !== 0) throw new Error(result.stderr.trim().split("\n").pop() ?? `exit code ${result.code}`);
    return JSON.parse(result.stdout);
  };
  const checker = new InvariantChecker({
    dbUri: table.dbUri,
    tableUri: table.tableUri,
    ...(table.storageOptions ? { storageOptions: table.storageOptions } : {}),
    store: table.store,
    history,
    violations,
    removed,
    archived,
    runCliVersions: async () => (await cli(["versions", table.tableUri, "--json"])) as VersionRecord[],
  });
  const cleaner = new SoakCleaner({
    store: table.store,
    history,
    random,
    violations,
    checker,
    removed,
    archived,
    runCliCleanup:
      options.store === "local"
        ? async (retain) =>
            (await cli(["cleanup", table.tableUri, "--older-than", "0s", "--allow-short-retention", "--retain-versions", String(retain), "--json"])) as CleanupReport
        : null,
    shouldStop,
  });
  const readers = new SoakReaders({
    dbUri: table.dbUri,
    ...(table.storageOptions ? { storageOptions: table.storageOptions } : {}),
    store: table.store,
    history,
    violations,
    shouldStop,
  });

  const progress = setInterval(() => {
    process.stdout.write(
      `${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s: ${history.latest} versions, ${checker.stats.rounds} rounds, ` +
        `${cleaner.stats.versionsRemoved} versions removed, ${violations.count} violations\n`,
    );
  }, 30_000);
  try {
    await writer.create();
    const harness = (name: string) => (error: unknown) => violations.add("harness", `${name} stopped: ${(error as Error).stack ?? error}`);
    await Promise.all([
      writer
        .run()
        .catch(harness("writer"))
        .finally(() => (writerDone = true)),
      readers.run().catch(harness("readers")),
      cleaner.run().catch(harness("cleaner")),
      cleaner.contend().catch(harness("second cleaner")),
    ]);
    // The writer has stopped: the head catches up, then one more cleanup and a full check.
    await head.idle();
    await writeTableHead(table.store);
    await cleaner.finish();
  } finally {
    clearInterval(progress);
    writer.close();
  }

  const live = (await lanceFormat.listVersionFiles(table.store)).length;
  const summary: SoakSummary = {
    options,
    command,
    machine: describeMachine(),
    startedAt,
    durationMs: Date.now() - startedAt.getTime(),
    writer: writer.stats,
    cleaner: cleaner.stats,
    head: head.stats,
    readers: readers.stats,
    checks: checker.stats,
    versionsEverCommitted: history.main.size,
    versionsLive: live,
    violations: violations.list,
  };
  await table.close();
  process.stdout.write(`\n${summaryLines(summary).join("\n")}\n`);
  await writeResults(options.out, summary);
  process.stdout.write(`\nwritten to ${options.out}\n`);
  return violations.count === 0 ? 0 : 1;
}

process.exitCode = await main();
