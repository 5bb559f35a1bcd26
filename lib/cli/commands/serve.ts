/**
 * `lakewarden serve [location]`: the Lambda functions' work on one machine. Heads follow every
 * commit under the location (file watching on disk, polling on S3) and cleanup runs on a
 * schedule; each thing it does is one line on stdout (`--json`: one JSON object per line).
 * Without a location it creates and serves a demo lake that LanceDB keeps committing to.
 * Runs until interrupted (Ctrl-C / SIGTERM), then stops cleanly.
 */
import { relative, resolve } from "node:path";
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import type { CliIO } from "../io.ts";
import { UsageError } from "../errors.ts";
import { EXIT_CODES_HELP } from "../exit-codes.ts";
import { assertLocalDirectory } from "../table-command.ts";
import { SHORT_RETENTION_FLAG, checkHeadCodecFlag, checkShortRetention, parseDurationFlag, parseSettingFlag } from "../flags.ts";
import { formatBytes, versionRanges, plural } from "../../text/human-units.ts";
import { headCodecs } from "../../head/registry.ts";
import { formatDuration } from "../../maintenance/duration.ts";
import { snakeCaseKeys } from "../../maintenance/cleanup-report.ts";
import type { CleanupSettings } from "../../maintenance/policy.ts";
import { startDemoLake, type DemoWriter } from "../../serve/demo-lake.ts";
import { LakeServer, type ServeEvent } from "../../serve/lake-server.ts";
import { parseLocation } from "../../store/location.ts";

interface ServeOptions {
  pollInterval?: string;
  cleanupEvery?: string;
  olderThan?: string;
  retainVersions?: string;
  codec?: string;
  depth: string;
  json?: boolean;
  allowShortRetention?: boolean;
}

export const DEMO_DIR = ".lakewarden-demo";
const DEMO_DEFAULTS = { cleanupEvery: "30s", olderThan: "1m", retainVersions: "3", commitEveryMs: 5000 };

export function registerServeCommand(program: Command, { io }: ProgramContext): void {
  program
    .command("serve")
    .description("keep heads current and clean on a schedule (no location: a demo lake)")
    .argument("[location]", `a local folder or s3://bucket/prefix (default: ./${DEMO_DIR})`)
    .option("--poll-interval <duration>", "how often to look for new versions (default 1s on S3, 5s on disk)")
    .option("--cleanup-every <duration>", `cleanup interval, or "off" (default 1h; demo ${DEMO_DEFAULTS.cleanupEvery})`)
    .option("--older-than <duration>", `cleanup removes versions older than this (default 7d; demo ${DEMO_DEFAULTS.olderThan})`)
    .option("--retain-versions <n>", `cleanup keeps the newest n versions (default 1; demo ${DEMO_DEFAULTS.retainVersions})`)
    .option("--codec <codec>", `head codec: ${headCodecs.names().join(" | ")} (default: each table's setting, else arrow)`)
    .option("--depth <n>", "folder levels below the location searched for tables", "4")
    .option(SHORT_RETENTION_FLAG, "allow --older-than below 7 days (the demo lake's own 1m needs none)")
    .option("--json", "print one JSON object per event, one per line")
    .option("--verbose", "print stack traces with errors")
    .addHelpText("after", `\n${EXIT_CODES_HELP}\n`)
    .action(async (location: string | undefined, options: ServeOptions) => {
      const demo = location === undefined;
      const served = location ?? resolve(DEMO_DIR);
      const settings = parseServeOptions(options, demo);
      if (!demo) await assertLocalDirectory(served, " to serve");

      let writer: DemoWriter | null = null;
      if (demo) {
        if (!options.json) {
          io.out(
            `demo: LanceDB commits to ./${DEMO_DIR}/events.lance every ${formatDuration(DEMO_DEFAULTS.commitEveryMs)}; ` +
              `cleanup every ${options.cleanupEvery ?? DEMO_DEFAULTS.cleanupEvery} removes versions older than ${options.olderThan ?? DEMO_DEFAULTS.olderThan} ` +
              `(keeping ${options.retainVersions ?? DEMO_DEFAULTS.retainVersions}). Ctrl-C to stop.\n`,
          );
        }
        writer = await startDemoLake(served, {
          commitEveryMs: DEMO_DEFAULTS.commitEveryMs,
          onCommit: (commit) => print(io, options, { type: "demo-commit", ...commit }, served),
          onError: (error) => print(io, options, { type: "error", message: `demo writer: ${(error as Error).message}` }, served),
        });
      }
      // The server first, so its "serving" line comes before the demo writer's first line.
      const server = await LakeServer.start({
        location: served,
        ...settings,
        onEvent: (event) => print(io, options, event, served),
      }).catch(async (error: unknown) => {
        await writer?.stop();
        throw error;
      });
      await writer?.begin();
      await untilInterrupted();
      await writer?.stop();
      await server.stop();
    });
}

function parseServeOptions(options: ServeOptions, demo: boolean) {
  const duration = (flag: string, text: string): number => parseDurationFlag(flag, text, { positive: true });
  const cleanupEvery = options.cleanupEvery ?? (demo ? DEMO_DEFAULTS.cleanupEvery : "1h");
  const cleanupSettings: CleanupSettings = {};
  const olderThan = options.olderThan ?? (demo ? DEMO_DEFAULTS.olderThan : undefined);
  const retainVersions = options.retainVersions ?? (demo ? DEMO_DEFAULTS.retainVersions : undefined);
  if (olderThan !== undefined) cleanupSettings.olderThanMs = parseSettingFlag("olderThanMs", olderThan, "--older-than");
  // The demo lake's short default is its own choice; a retention the user types is checked.
  if (options.olderThan !== undefined) checkShortRetention(cleanupSettings.olderThanMs, Boolean(options.allowShortRetention));
  if (retainVersions !== undefined) cleanupSettings.retainVersions = parseSettingFlag("retainVersions", retainVersions, "--retain-versions");
  checkHeadCodecFlag(options.codec);
  const depth = /^\d+$/.test(options.depth) ? Number(options.depth) : Number.NaN;
  if (!Number.isSafeInteger(depth)) throw new UsageError(`--depth = ${JSON.stringify(options.depth)} is not a whole number`);
  return {
    cleanupEveryMs: cleanupEvery === "off" ? null : duration("--cleanup-every", cleanupEvery),
    cleanupSettings,
    discoveryDepth: depth,
    ...(options.pollInterval !== undefined ? { pollIntervalMs: duration("--poll-interval", options.pollInterval) } : {}),
    ...(options.codec !== undefined ? { headOptions: { codec: options.codec } } : {}),
  };
}

function untilInterrupted(): Promise<void> {
  return new Promise((done) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

type PrintedEvent = ServeEvent | { type: "demo-commit"; version: number; operation: string; rows: number };

function print(io: CliIO, options: ServeOptions, event: PrintedEvent, served: string): void {
  if (options.json) {
    io.out(`${JSON.stringify(snakeCaseKeys({ time: new Date().toISOString(), ...event }))}\n`);
    return;
  }
  const line = describeEvent(event, served);
  if (line !== null) io.out(`[${new Date().toTimeString().slice(0, 8)}] ${line}\n`);
}

function describeEvent(event: PrintedEvent, served: string): string | null {
  const name = (table: string): string => shortName(table, served);
  switch (event.type) {
    case "started":
      return (
        `serving ${event.location}: ${plural(event.tables.length, "table")}${event.tables.length ? ` (${event.tables.map((t) => t || ".").join(", ")})` : ""}; ` +
        `${event.watching === "files" ? "watching files, polling" : "polling"} every ${formatDuration(event.pollIntervalMs)}; ` +
        `cleanup ${event.cleanupEveryMs === null ? "off" : `every ${formatDuration(event.cleanupEveryMs)}`}`
      );
    case "table-found":
      return `table    ${name(event.table)}  found`;
    case "table-ignored":
      return `table    ${name(event.table)}  ignored: ${event.reason}`;
    case "demo-commit":
      if (event.operation === "open") return `demo     events.lance  reopened at version ${event.version} (${plural(event.rows, "row")}): no new commit; the demo writer resumes`;
      return `commit   events.lance  version ${event.version} (${event.operation}, ${plural(event.rows, "row")}) by the demo writer`;
    case "head": {
      const what =
        event.action === "created" || event.action === "replaced"
          ? `${event.action} (${formatBytes(event.bytes)} in ${event.durationMs} ms)`
          : event.action === "skipped-newer-present"
            ? "already newer"
            : "already current";
      return `head     ${name(event.table)}  version ${event.version} ${what}${event.notifiedVersionGone ? " (the notified version was already cleaned up)" : ""}`;
    }
    case "head-failed":
      return `head     ${name(event.table)}  version ${event.version} FAILED: ${event.error}`;
    case "cleanup": {
      const removed =
        event.versionsRemoved.length === 0
          ? "no versions removed"
          : `removed ${event.versionsRemoved.length === 1 ? "version" : "versions"} ${versionRanges(event.versionsRemoved)}`;
      return (
        `cleanup  ${name(event.table)}  ${event.status}: ${removed}, ${plural(event.filesRemoved, "file")}, ${formatBytes(event.bytesRemoved)} (${event.durationMs} ms)` +
        (event.warnings.length ? `; ${event.warnings.join("; ")}` : "")
      );
    }
    case "cleanup-skipped":
      return `cleanup  ${name(event.table)}  skipped: ${event.reason}`;
    case "cleanup-failed":
      return `cleanup  ${name(event.table)}  FAILED: ${event.error}`;
    case "error":
      return `error    ${event.message}`;
    case "stopped":
      return "stopped";
  }
}

function shortName(tableUri: string, served: string): string {
  const root = parseLocation(served).uri;
  if (tableUri === root) return ".";
  if (tableUri.startsWith(`${root}/`)) return tableUri.slice(root.length + 1);
  return relative(served, tableUri) || tableUri;
}
