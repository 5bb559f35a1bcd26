/**
 * Format knowledge lives only in lib/formats/: the pipeline's decision modules speak the
 * TableFormat interface's terms, in their code and in their comments, so a comment cannot keep
 * describing a format's rule after the format stopped using the hook (as keptTogether's did).
 */
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";

const NEUTRAL = ["lib/maintenance/version-plan.ts", "lib/maintenance/process-manifests.ts", "lib/maintenance/removal-steps.ts", "lib/maintenance/admission.ts"];

it.each(NEUTRAL)("%s names no table format", async (path) => {
  const text = await readFile(new URL(`../../${path}`, import.meta.url), "utf8");
  const named = text.split("\n").flatMap((line, i) => (/\b(Lance|Delta|Iceberg)\b/.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
  expect(named).toEqual([]);
});
