/**
 * `npm run soak:engines -- [--rounds N] [--commits N] [--only delta,iceberg,lance] [--store local|s3]`: the engine
 * races of test/engines/ (race.ts) with more rounds: delta-rs, pyiceberg (a catalog-less table
 * and one in its SQL catalog) and Lance from Python commit while lakewarden's cleanup and head
 * writes run on the same table, and after every round the engine's own reader reads every live
 * version back. With `--store s3` the tables live on a moto server started here (the tests'
 * Python tools), the endpoint of the writers, their readers and lakewarden alike. Prints one line
 * of figures per table and writes them to bench/soak-results/engines-<store>.md (not committed;
 * `--out` names another file).
 *
 * Needs the tests' Python tools (`node test/tools/setup-python.ts`). Exit code: 0 when no
 * promise was broken, 1 otherwise, 2 on bad arguments.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { deltaTable, icebergFolderTable, icebergSqlTable, lanceTable } from "../../test/engines/engine-tables.ts";
import { figuresLine, raceWritersAndMaintenance, type EngineTable, type RaceFigures } from "../../test/engines/race.ts";
import { SHORT_RACE_CLEANUP_FLAGS } from "../../test/engines/race-flags.ts";
import { startMotoS3, type MotoS3 } from "../../test/engines/moto-endpoint.ts";
import { makeTempDir, removeDir } from "../../test/support/lance-datasets.ts";
import { describeMachine } from "../harness/machine.ts";

const TABLES: Record<string, ((root: string, localDir: string) => EngineTable)[]> = {
  delta: [deltaTable],
  iceberg: [icebergFolderTable, icebergSqlTable],
  lance: [lanceTable],
};

interface Options {
  rounds: number;
  commits: number;
  only: string[];
  store: "local" | "s3";
  out: string | null;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { rounds: 20, commits: 8, only: Object.keys(TABLES), store: "local", out: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag}: needs a value`);
    if (flag === "--rounds" || flag === "--commits") {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} = ${JSON.stringify(value)} is not a whole number of at least 1`);
      options[flag === "--rounds" ? "rounds" : "commits"] = n;
    } else if (flag === "--only") {
      const names = value.split(",");
      const unknown = names.filter((n) => !(n in TABLES));
      if (unknown.length > 0) throw new Error(`--only: unknown format ${unknown.join(", ")} (known: ${Object.keys(TABLES).join(", ")})`);
      options.only = names;
    } else if (flag === "--store") {
      if (value !== "local" && value !== "s3") throw new Error(`--store = ${JSON.stringify(value)}: local or s3`);
      options.store = value;
    } else if (flag === "--out") options.out = value;
    else throw new Error(`unknown option ${flag}`);
    i++;
  }
  return options;
}

function machineLine(): string {
  const m = describeMachine();
  return `${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}`;
}

function broken(f: RaceFigures): boolean {
  return f.problems.length > 0 || f.runErrors.length > 0 || f.rowsLost > 0 || f.unreadableKept > 0 || f.missingFromHistory > 0 || f.summaryMismatches > 0;
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`soak:engines: ${(error as Error).message}\n`);
    return 2;
  }
  const out = options.out ?? `bench/soak-results/engines-${options.store}.md`;
  const started = new Date();
  const results: { figures: RaceFigures; seconds: number }[] = [];
  let moto: MotoS3 | null = null;
  if (options.store === "s3") {
    moto = await startMotoS3();
    await moto.createBucket("lake");
    // lakewarden runs in this process: its S3 store reads the endpoint from the environment.
    Object.assign(process.env, moto.env);
  }
  try {
    for (const format of options.only) {
      for (const make of TABLES[format]!) {
        const dir = await makeTempDir(`lakewarden-soak-${format}-`);
        const root = moto ? `s3://lake/${randomUUID()}` : dir;
        const t0 = Date.now();
        try {
          const figures = await raceWritersAndMaintenance(make(root, dir), {
            rounds: options.rounds,
            commitsPerRound: options.commits,
            cleanupFlags: SHORT_RACE_CLEANUP_FLAGS,
            retainVersions: 2,
            workDir: dir,
            env: { LAKEWARDEN_DELTA_AGE_LOG_SECONDS: "86400", ...(moto?.env ?? {}) },
            ...(moto ? { pauseMs: 1000 } : {}),
            log: (line) => process.stderr.write(`${line}\n`),
          });
          const seconds = (Date.now() - t0) / 1000;
          results.push({ figures, seconds });
          process.stdout.write(`${figuresLine(figures)} (${seconds.toFixed(0)} s)\n`);
          for (const line of [...figures.problems, ...figures.runErrors]) process.stdout.write(`  ${line}\n`);
        } finally {
          await removeDir(dir);
        }
      }
    }
  } finally {
    await moto?.stop();
  }
  const header =
    "| table | rounds | commits | cleanups (during writes; expiry commits lost to the writer; superseded pointers refused) | head writes | versions removed | files deleted | listed cleaned up | kept versions read | rows lost | kept unreadable | missing from history | row counts misreported | listed live, data vacuumed | writer reloads | seconds |";
  const rows = results.map(
    ({ figures: f, seconds }) =>
      `| ${f.label} | ${f.rounds} | ${f.commits} | ${f.cleanups} (${f.cleanupsDuringWrites}; ${f.commitRacesLost}; ${f.supersededPointers}) | ${f.headWrites} | ${f.versionsRemoved} | ${f.filesDeleted} | ${f.cleanedUp} | ${f.keptVersionsRead} | ${f.rowsLost} | ${f.unreadableKept} | ${f.missingFromHistory} | ${f.summaryMismatches} | ${f.listedButVacuumed} | ${f.writerReloads} | ${seconds.toFixed(0)} |`,
  );
  const problems = results.flatMap(({ figures }) => [...figures.problems, ...figures.runErrors].map((line) => `- ${figures.label}: ${line}`));
  const text = [
    "# Engine soak: real writers racing lakewarden maintenance",
    "",
    `Run ${started.toISOString()} on ${options.store === "s3" ? "moto's S3 (moto_server of test/tools/requirements.txt)" : "local disk"}, ${options.rounds} rounds of ${options.commits} operations per table; cleanup ${SHORT_RACE_CLEANUP_FLAGS.join(" ")}.`,
    `Machine: ${machineLine()}; engines pinned in test/tools/requirements.txt.`,
    "",
    header,
    `|${header
      .split("|")
      .slice(1, -1)
      .map(() => "---")
      .join("|")}|`,
    ...rows,
    "",
    ...(problems.length > 0 ? ["## Problems", "", ...problems, ""] : []),
  ].join("\n");
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, text);
  process.stdout.write(`results: ${out}\n`);
  return results.some(({ figures }) => broken(figures)) ? 1 : 0;
}

process.exit(await main());
