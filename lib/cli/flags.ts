/** Flag values the commands share, checked by the same rules as the settings they stand for. */
import { headCodecs } from "../head/registry.ts";
import { parseSetting } from "../maintenance/policy.ts";
import type { PolicyField } from "../maintenance/policy.ts";
import { UsageError } from "./errors.ts";

const WHERE = "command line";

/** A retention flag (`--older-than 7d`) parsed like the table config value it overrides; UsageError naming the flag. */
export function parseSettingFlag<F extends PolicyField>(field: F, text: string, flag: string): ReturnType<typeof parseSetting<F>> {
  try {
    return parseSetting(field, text, flag, WHERE);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(`${WHERE}: `, ""));
  }
}

/** `--codec`: one of the registered head codecs. */
export function checkHeadCodecFlag(codec: string | undefined): void {
  if (codec !== undefined && !headCodecs.get(codec)) {
    throw new UsageError(`unknown head codec ${JSON.stringify(codec)} (known: ${headCodecs.names().join(", ")})`);
  }
}
