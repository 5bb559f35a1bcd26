import { describe, expect, it } from "vitest";
import { describeAge, formatDuration, parseDuration } from "../../lib/maintenance/duration.ts";
import { PolicyError } from "../../lib/maintenance/errors.ts";
import { describePolicy, resolvePolicy, settingsFromEnvironment } from "../../lib/maintenance/policy.ts";

const DAY = 86_400_000;

describe("durations", () => {
  it("parses short and humantime spellings", () => {
    expect(parseDuration("7d")).toBe(7 * DAY);
    expect(parseDuration("14days")).toBe(14 * DAY);
    expect(parseDuration("1d12h")).toBe(1.5 * DAY);
    expect(parseDuration("2 weeks")).toBe(14 * DAY);
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("0s")).toBe(0);
    expect(parseDuration("250ms")).toBe(250);
  });

  it("refuses numbers without units and unknown units", () => {
    for (const bad of ["7", "", "7x", "d", "-1d", "7d garbage"]) expect(parseDuration(bad)).toBeNull();
  });

  it("formats in the largest whole unit and describes ages", () => {
    expect(formatDuration(7 * DAY)).toBe("7d");
    expect(formatDuration(90 * 60_000)).toBe("90m");
    expect(formatDuration(1500)).toBe("1500ms");
    expect(describeAge(9 * DAY + 5)).toBe("9 days");
    expect(describeAge(3_600_000)).toBe("1 hour");
  });
});

describe("retention policy", () => {
  const uri = "file:///lake/t.lance";

  it("defaults: 7 days, keep the latest, no protection, verified deletes only", () => {
    const policy = resolvePolicy({}, {}, uri);
    expect(policy).toMatchObject({ olderThanMs: 7 * DAY, retainVersions: 1, protectBefore: null, deleteUnverified: false, safetyWindowMs: 7 * DAY });
    expect(Object.values(policy.sources)).toEqual(Array(7).fill("default"));
    expect(policy.warnings).toEqual([]);
  });

  it("caller settings override the table's lakewarden.* config, which overrides defaults; each override is a warning", () => {
    const policy = resolvePolicy(
      { olderThanMs: 8 * DAY, retainVersions: 5 },
      { "lakewarden.older_than": "30d", "lakewarden.protect_before": "10", "lance.auto_cleanup.interval": "20" },
      uri,
    );
    expect(policy.olderThanMs).toBe(8 * DAY);
    expect(policy.protectBefore).toBe(10);
    expect(policy.retainVersions).toBe(5);
    expect(policy.sources).toMatchObject({
      olderThanMs: "option",
      protectBefore: "table config lakewarden.protect_before",
      retainVersions: "option",
      deleteUnverified: "default",
    });
    expect(describePolicy(policy).older_than).toEqual({ value: "8d", source: "option" });
    expect(policy.warnings).toEqual(['--older-than 8d overrides table config lakewarden.older_than = "30d"']);
  });

  it("a bad table config value is one clear error naming the table and the key", () => {
    expect(() => resolvePolicy({}, { "lakewarden.older_than": "soon" }, uri)).toThrow(PolicyError);
    expect(() => resolvePolicy({}, { "lakewarden.older_than": "soon" }, uri)).toThrow(`${uri}: table config lakewarden.older_than = "soon" is not a duration`);
    expect(() => resolvePolicy({}, { "lakewarden.retain_versions": "0" }, uri)).toThrow(/"0" is not allowed: the latest version is always kept, so the fewest versions kept is 1/);
    expect(() => resolvePolicy({ retainVersions: 0 }, {}, uri)).toThrow(/retainVersions/);
  });

  it("reads Lambda defaults from the environment", () => {
    expect(settingsFromEnvironment({ LAKEWARDEN_OLDER_THAN: "3d", LAKEWARDEN_DELETE_UNVERIFIED: "true", OTHER: "x" })).toEqual({
      olderThanMs: 3 * DAY,
      deleteUnverified: true,
    });
    expect(() => settingsFromEnvironment({ LAKEWARDEN_RETAIN_VERSIONS: "many" })).toThrow(/LAKEWARDEN_RETAIN_VERSIONS/);
  });
});
