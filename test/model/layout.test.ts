/**
 * lib/model/layout.ts holds every key lakewarden writes: no other module of lib/, functions/ or
 * infra/ spells a `_lakewarden` key in its code (comments may name them), and each name a folder
 * is given reads back to what made it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";
import {
  ARCHIVE_PREFIX,
  CHECKPOINTS_PREFIX,
  DAMAGED_PREFIX,
  LAKEWARDEN_PREFIX,
  PINS_PREFIX,
  RUNS_PREFIX,
  RUN_PROGRESS_PREFIX,
  checkpointKey,
  damagedKey,
  parseCheckpointKey,
  parseSegmentKey,
  pinKey,
  runIntentKey,
  runIntentPartKey,
  runProgressSegmentKey,
  runReceiptKey,
  segmentKey,
} from "../../lib/model/layout.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const LAYOUT = join("lib", "model", "layout.ts");

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "cdk.out" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The string and template pieces of a file's code that spell `_lakewarden` (comments are not code). */
function keysSpelled(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(join(ROOT, path), "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) && node.text.includes("_lakewarden")) {
      found.push(`${relative(ROOT, join(ROOT, path))}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

it("no module but lib/model/layout.ts spells a _lakewarden key in its code", () => {
  const files = ["lib", "functions", "infra"].flatMap(sources).filter((path) => path !== LAYOUT);
  expect(files.length).toBeGreaterThan(100);
  expect(files.flatMap(keysSpelled)).toEqual([]);
});

it("the scan finds a spelled key (the check can fail)", () => {
  expect(keysSpelled(LAYOUT)).toEqual([expect.stringContaining('"_lakewarden/"')]);
});

it("every key the layout makes lies in its folder under _lakewarden/, and reads back", () => {
  expect(parseCheckpointKey(checkpointKey(42))).toBe(42);
  expect(checkpointKey(42)).toBe(`${CHECKPOINTS_PREFIX}00000000000000000042.arrow`);
  expect(parseCheckpointKey(`${CHECKPOINTS_PREFIX}42.arrow`)).toBeNull();
  expect(parseSegmentKey(segmentKey(3, 9))).toEqual({ key: segmentKey(3, 9), first: 3, last: 9 });
  expect(parseSegmentKey(segmentKey(9, 3))).toBeNull();
  const made = [
    [PINS_PREFIX, pinKey("reader-1")],
    [RUNS_PREFIX, runReceiptKey("20261201T000000000Z-1a2b3c4d")],
    [RUNS_PREFIX, runIntentKey("20261201T000000000Z-1a2b3c4d")],
    [RUNS_PREFIX, runIntentPartKey("20261201T000000000Z-1a2b3c4d", 2)],
    [RUN_PROGRESS_PREFIX, runProgressSegmentKey("20261201T000000000Z-1a2b3c4d", "scan-0")],
    [DAMAGED_PREFIX, damagedKey(checkpointKey(7), Date.UTC(2026, 11, 1))],
    [ARCHIVE_PREFIX, segmentKey(1, 2)],
  ];
  for (const [folder, key] of made) {
    expect(folder!.startsWith(LAKEWARDEN_PREFIX)).toBe(true);
    expect(key!.startsWith(folder!)).toBe(true);
    expect(key!.slice(folder!.length)).not.toContain("/");
  }
  expect(runIntentPartKey("r", 2)).toBe(`${runIntentKey("r")}.files-2`);
});
