/**
 * Durations as people write them: `7d`, `12h`, `1d12h`, `90m`, `0s`, and Lance's humantime
 * spellings (`14days`, `2 weeks`). A number alone is refused: `7` could be days or seconds.
 */
const UNIT_MILLIS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const UNIT_ALIASES: Record<string, string> = {
  ms: "ms",
  msec: "ms",
  millis: "ms",
  millisecond: "ms",
  milliseconds: "ms",
  s: "s",
  sec: "s",
  secs: "s",
  second: "s",
  seconds: "s",
  m: "m",
  min: "m",
  mins: "m",
  minute: "m",
  minutes: "m",
  h: "h",
  hr: "h",
  hrs: "h",
  hour: "h",
  hours: "h",
  d: "d",
  day: "d",
  days: "d",
  w: "w",
  week: "w",
  weeks: "w",
};

/** Milliseconds of a duration text, or null when it is not one. */
export function parseDuration(text: string): number | null {
  const compact = text.trim().toLowerCase();
  if (compact === "") return null;
  const part = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*/y;
  let total = 0;
  let position = 0;
  while (position < compact.length) {
    part.lastIndex = position;
    const match = part.exec(compact);
    if (!match) return null;
    const unit = UNIT_ALIASES[match[2]!];
    if (!unit) return null;
    total += Number(match[1]) * UNIT_MILLIS[unit]!;
    position = part.lastIndex;
  }
  return Number.isFinite(total) ? Math.round(total) : null;
}

/** The largest whole unit that divides the duration: 604800000 → "7d", 5400000 → "90m". */
export function formatDuration(millis: number): string {
  if (millis === 0) return "0s";
  for (const unit of ["d", "h", "m", "s"] as const) {
    const size = UNIT_MILLIS[unit]!;
    if (millis % size === 0) return `${millis / size}${unit}`;
  }
  return `${millis}ms`;
}

/** "3 days", "5 hours", "12 minutes": an age for reasons shown to people. */
export function describeAge(millis: number): string {
  const abs = Math.max(0, millis);
  const units: [number, string][] = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, name] of units) {
    if (abs >= size) {
      const n = Math.floor(abs / size);
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${abs} ms`;
}
