/**
 * `node bench/cold-start.ts [--root <checkout>] [--runs N] [--out <file.md>]`: the Lambdas' cold
 * start. Each run is a fresh `node` process that imports one function's bundle (as deployed:
 * infra/bundle-report.ts bundles it) and serves one event against a local store (the fauxqs
 * S3/SQS emulator in this process); the baseline is a bundle that only imports the S3 client and
 * serves one GET. The figure is the ratio of the two, both measured in the same run, so the
 * machine's load cancels out.
 *
 * `--root` measures another checkout's bundles (say a worktree of main, before a change) with
 * that checkout's own bundling code; the table, events and baseline stay this script's.
 * `--before <checkout>` measures that checkout's bundles too, in the same run, interleaved with
 * this one's (`--root`'s): before and after under the same load, against the same baseline
 * (`--before-label` names it when it is no git checkout, say a `git archive` of main).
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DeleteObjectsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { build } from "esbuild";
import { PROJECT_ROOT } from "../infra/function-bundling.ts";
import { startFauxqsServer } from "../test/support/fauxqs.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../test/support/lance-datasets.ts";
import { describeMachine, machineShort } from "./harness/machine.ts";

const { values } = parseArgs({
  options: { root: { type: "string" }, before: { type: "string" }, "before-label": { type: "string" }, runs: { type: "string", default: "7" }, out: { type: "string" } },
});
const root = resolve(values.root ?? PROJECT_ROOT);
const before = values.before ? resolve(values.before) : undefined;
const runs = Number(values.runs);

const BUCKET = "cold-start";
const FUNCTIONS = ["on-commit", "schedule-cleanup", "cleanup-table"] as const;

/** The child: imports a bundle and serves one event; prints when the import and the event ended (ms since the process began). */
const CHILD = `
const [bundle, eventJson] = process.argv.slice(2);
const context = { functionName: "cold-start", functionVersion: "$LATEST", invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:cold-start",
  memoryLimitInMB: "1024", awsRequestId: "r-1", logGroupName: "g", logStreamName: "s", callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 600000, done() {}, fail() {}, succeed() {} };
const { handler } = await import(bundle);
const loaded = performance.now();
const result = await handler(JSON.parse(eventJson), context);
const served = performance.now();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ loaded, served, cpuMs: (cpu.user + cpu.system) / 1000, result }) + "\\n");
`;

/** The baseline: the S3 client alone, serving one GET. */
const BASELINE = `
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
const client = new S3Client({ forcePathStyle: true });
export const handler = async (event) => {
  const response = await client.send(new GetObjectCommand({ Bucket: event.bucket, Key: event.key }));
  return (await response.Body.transformToByteArray()).length;
};
`;

interface Sample {
  loaded: number;
  served: number;
  cpuMs: number;
  wallMs: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function runChild(child: string, bundle: string, event: unknown, env: Record<string, string>): Promise<Sample> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const proc = spawn(process.execPath, [child, bundle, JSON.stringify(event)], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    proc.on("close", (code) => {
      const wallMs = performance.now() - started;
      const line = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0 || !line.startsWith("{")) return fail(new Error(`${bundle}: exit ${code}: ${err.slice(-2000)}`));
      const parsed = JSON.parse(line) as Sample & { result: { batchItemFailures?: unknown[] } | null };
      // An event that failed would time a failure: the run stops instead.
      if ((parsed.result?.batchItemFailures?.length ?? 0) > 0) return fail(new Error(`${bundle}: the event failed: ${JSON.stringify(parsed.result)}`));
      done({ loaded: parsed.loaded, served: parsed.served, cpuMs: parsed.cpuMs, wallMs });
    });
  });
}

const work = await makeTempDir("lw-cold-start-");
const fauxqs = await startFauxqsServer({ buckets: [BUCKET] });
try {
  const queue = await fauxqs.createQueue("cleanup");
  const dataset = await buildLanceDataset({ dbUri: `s3://${BUCKET}/lake`, tableName: "orders", storageOptions: fauxqs.lanceStorageOptions });
  dataset.close();
  const tableKey = "lake/orders.lance";
  const listed = await fauxqs.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${tableKey}/_versions/` }));
  const manifests = (listed.Contents ?? []).map((o) => o.Key!).sort();
  // Lance V2 names sort newest first.
  const newest = manifests[0]!;

  /** A checkout's bundles, made by its own bundling code. */
  const bundlesOf = async (checkout: string, outdir: string) => {
    const { bundleFunctions } = (await import(join(checkout, "infra", "bundle-report.ts"))) as typeof import("../infra/bundle-report.ts");
    const { context } = JSON.parse(await readFile(join(checkout, "cdk.json"), "utf8")) as { context: Record<string, unknown> };
    return bundleFunctions(join(work, outdir), context);
  };
  const bundles = await bundlesOf(root, "cdk.out");
  const bundlesBefore = before ? await bundlesOf(before, "cdk.out-before") : [];
  await mkdir(join(work, "baseline"));
  await writeFile(join(work, "baseline", "entry.mjs"), BASELINE);
  await build({
    entryPoints: [join(work, "baseline", "entry.mjs")],
    outfile: join(work, "baseline", "index.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    minify: true,
    nodePaths: [join(PROJECT_ROOT, "node_modules")],
    logLevel: "error",
  });
  const child = join(work, "child.mjs");
  await writeFile(child, CHILD);

  const env = {
    ...fauxqs.awsEnv,
    AWS_S3_FORCE_PATH_STYLE: "true",
    LAKEWARDEN_TABLE_PREFIXES: JSON.stringify([`s3://${BUCKET}/lake/`]),
    LAKEWARDEN_CLEANUP_QUEUE_URL: queue.queueUrl,
    POWERTOOLS_LOG_LEVEL: "CRITICAL",
    POWERTOOLS_METRICS_DISABLED: "true",
  };
  const sqsRecord = (body: string) => ({
    messageId: "m-1",
    receiptHandle: "r-1",
    body,
    attributes: { ApproximateReceiveCount: "1", SentTimestamp: "0", SenderId: "s", ApproximateFirstReceiveTimestamp: "0" },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:cleanup`,
    awsRegion: "us-east-1",
  });
  const s3Event = {
    Records: [
      {
        eventVersion: "2.1",
        eventSource: "aws:s3",
        eventName: "ObjectCreated:Put",
        eventTime: new Date().toISOString(),
        s3: { bucket: { name: BUCKET }, object: { key: newest, size: 1 } },
      },
    ],
  };
  const events: Record<string, unknown> = {
    "on-commit": { Records: [sqsRecord(JSON.stringify(s3Event))] },
    "schedule-cleanup": { version: "0", id: "e-1", "detail-type": "Scheduled Event", source: "aws.events", time: new Date().toISOString(), detail: {} },
    "cleanup-table": { Records: [sqsRecord(JSON.stringify({ table: `s3://${BUCKET}/${tableKey}`, requestedAt: new Date().toISOString() }))] },
  };
  /** Every run starts from the same table: no head (on-commit writes one), no lakewarden state. */
  const reset = async () => {
    const ours = await fauxqs.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${tableKey}/_lakewarden/` }));
    const keys = (ours.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length > 0) await fauxqs.s3Client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys } }));
  };

  const samples: Record<string, Sample[]> = {
    baseline: [],
    ...Object.fromEntries(
      FUNCTIONS.flatMap((f) => [
        [f, []],
        [`before:${f}`, []],
      ]),
    ),
  };
  // Interleaved, so a change in the machine's load falls on every bundle alike.
  for (let run = 0; run < runs; run++) {
    samples.baseline!.push(await runChild(child, join(work, "baseline", "index.mjs"), { bucket: BUCKET, key: newest }, env));
    for (const name of FUNCTIONS) {
      await reset();
      const bundle = bundles.find((b) => b.name === name)!;
      samples[name]!.push(await runChild(child, join(bundle.directory, "index.mjs"), events[name], env));
      const old = bundlesBefore.find((b) => b.name === name);
      if (old) {
        await reset();
        samples[`before:${name}`]!.push(await runChild(child, join(old.directory, "index.mjs"), events[name], env));
      }
    }
  }

  const commit = await gitHead(root);
  const commitBefore = before ? (values["before-label"] ?? (await gitHead(before))) : undefined;
  const base = median(samples.baseline!.map((s) => s.served));
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  const sizeOf = (name: string): string => {
    const [from, fn] = name.startsWith("before:") ? [bundlesBefore, name.slice("before:".length)] : [bundles, name];
    const b = from.find((x) => x.name === fn) as { bundleBytes: number; startBytes?: number } | undefined;
    return b ? kib(b.startBytes ?? b.bundleBytes) : "";
  };
  const labelOf = (name: string): string =>
    name.startsWith("before:") ? `${name.slice("before:".length)}, before (${commitBefore})` : before ? `${name}, after (${commit})` : name;
  const rows = [
    [
      "S3 client only (baseline)",
      kib((await readFile(join(work, "baseline", "index.mjs"))).length),
      base,
      median(samples.baseline!.map((s) => s.loaded)),
      median(samples.baseline!.map((s) => s.cpuMs)),
      median(samples.baseline!.map((s) => s.wallMs)),
    ],
    ...FUNCTIONS.flatMap((f) => (before ? [`before:${f}`, f] : [f])).map((name) => [
      labelOf(name),
      sizeOf(name),
      median(samples[name]!.map((s) => s.served)),
      median(samples[name]!.map((s) => s.loaded)),
      median(samples[name]!.map((s) => s.cpuMs)),
      median(samples[name]!.map((s) => s.wallMs)),
    ]),
  ] as [string, string, number, number, number, number][];
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const report = [
    before ? `### Cold start, ${commitBefore} (--before) and ${commit} (after), one run` : `### Cold start, ${commit} (${root === PROJECT_ROOT ? "this checkout" : "--root"})`,
    "",
    `\`node bench/cold-start.ts${values.root ? " --root <checkout>" : ""}${before ? " --before <checkout>" : ""} --runs ${runs}\`, ${new Date().toISOString().slice(0, 16)}Z, ${machineShort(describeMachine())}. ` +
      `Median of ${runs} fresh processes per bundle, interleaved. *Served*: from the process's start to the event's answer (performance.now() in the child); *loaded*: to the end of the bundle's import. ` +
      "Events against fauxqs S3/SQS on this machine, a 2-version Lance table: on-commit writes the head of the newest version (no head before), " +
      "schedule-cleanup lists the prefix and sends one message, cleanup-table runs a cleanup that removes nothing (retention keeps both versions) and archives them. " +
      "*At start*: the bytes of the files the bundle's import loads (before a split: the one file).",
    "",
    "| bundle | at start | served | vs baseline | loaded | CPU (whole process) | process wall |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(([name, size, served, loaded, cpu, wall]) => `| ${name} | ${size} | ${ms(served)} | ${(served / base).toFixed(2)}× | ${ms(loaded)} | ${ms(cpu)} | ${ms(wall)} |`),
    "",
  ].join("\n");
  process.stdout.write(report);
  if (values.out) await writeFile(values.out, `${await readFile(values.out, "utf8").catch(() => "")}${report}\n`);
} finally {
  await fauxqs.stop();
  await removeDir(work);
}

async function gitHead(dir: string): Promise<string> {
  return new Promise((done) => {
    const git = spawn("git", ["rev-parse", "--short", "HEAD"], { cwd: dir });
    let out = "";
    git.stdout.on("data", (d: Buffer) => (out += d.toString()));
    git.on("close", () => done(out.trim() || "unknown"));
  });
}
