/**
 * `lakewarden config show|set|unset <table>`: per-table cleanup settings stored by lakewarden
 * in `<table>/_lakewarden/config`, for writers that cannot set `lakewarden.*` keys in the
 * table's own config. The table's own config still wins where it sets the same key; the
 * environment and flags win over both (lib/maintenance/policy.ts).
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { UsageError } from "../errors.ts";
import { printJson, runOnTable, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { textTable } from "../text-table.ts";
import { loadTableState } from "../../head/loader.ts";
import { DEFAULT_SETTINGS, TABLE_CONFIG_KEYS, describePolicy, parseSetting, resolvePolicy } from "../../maintenance/policy.ts";
import type { PolicyField } from "../../maintenance/policy.ts";
import { ShortSettingError } from "../../maintenance/errors.ts";
import { STORED_CONFIG_FIELDS, STORED_CONFIG_KEY, readStoredConfig, storedConfigKey, updateStoredConfig } from "../../maintenance/stored-config.ts";
import type { ObjectStore } from "../../store/object-store.ts";

export function registerConfigCommand(program: Command, { io }: ProgramContext): void {
  const config = program.command("config").description(`per-table cleanup settings kept in ${STORED_CONFIG_KEY}`);

  withOutputOptions(config.command("show").description("each cleanup setting's value and where it comes from").argument("<table>", TABLE_ARGUMENT_HELP)).action(
    async (table: string, options: OutputOptions) => {
      const shown = await runOnTable(table, options, io, (store) => effectiveSettings(store));
      if (options.json) printJson(io, shown);
      else io.out(describe(shown));
    },
  );

  withOutputOptions(
    config
      .command("set")
      .description("store settings, e.g. older_than=30d retain_versions=5")
      .argument("<table>", TABLE_ARGUMENT_HELP)
      .argument("<key=value...>", "one or more settings (the names config show lists)"),
  ).action(async (table: string, pairs: string[], options: OutputOptions) => {
    const set: Record<string, string> = {};
    for (const pair of pairs) {
      const at = pair.indexOf("=");
      if (at <= 0) throw new UsageError(`${JSON.stringify(pair)} is not key=value (e.g. older_than=30d)`);
      set[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
    checkSettings(set, Object.keys(set));
    const shown = await runOnTable(table, options, io, async (store) => {
      await refusedAsUsage(() => updateStoredConfig(store, { set }));
      return effectiveSettings(store);
    });
    if (options.json) printJson(io, shown);
    else io.out(describe(shown));
  });

  withOutputOptions(
    config
      .command("unset")
      .description(`remove settings from ${STORED_CONFIG_KEY}`)
      .argument("<table>", TABLE_ARGUMENT_HELP)
      .argument("<key...>", "settings to remove (the lakewarden. prefix is optional)"),
  ).action(async (table: string, keys: string[], options: OutputOptions) => {
    checkSettings({}, keys);
    const shown = await runOnTable(table, options, io, async (store) => {
      await refusedAsUsage(() => updateStoredConfig(store, { unset: keys }));
      return effectiveSettings(store);
    });
    if (options.json) printJson(io, shown);
    else io.out(describe(shown));
  });
}

/** A change the policy's guards refuse is a usage error (exit 2), like a bad flag: nothing was written. */
async function refusedAsUsage<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof ShortSettingError) throw new UsageError(error.message);
    throw error;
  }
}

/** Names and values checked before anything is read: a bad one is a usage error (exit 2). */
function checkSettings(set: Record<string, string>, names: readonly string[]): void {
  try {
    for (const name of names) {
      const key = storedConfigKey(name, "lakewarden config");
      if (name in set) parseSetting(STORED_CONFIG_FIELDS.get(key)!, set[name]!, key, "lakewarden config");
    }
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^lakewarden config: /, ""));
  }
}

interface EffectiveSetting {
  key: string;
  value: string | number | boolean | null;
  source: string;
  table_config: string | null;
  lakewarden_config: string | null;
}

interface ShownConfig {
  table: string;
  stored_config: string;
  /** The stored file as it is (user data: keys as written). */
  config: Record<string, string>;
  settings: EffectiveSetting[];
}

async function effectiveSettings(store: ObjectStore): Promise<ShownConfig> {
  const [stored, state] = await Promise.all([readStoredConfig(store), loadTableState(store)]);
  const tableConfig = state.snapshot.config;
  // Shown, not guarded: a refused setting is shown here so it can be fixed (cleanup refuses it).
  const described = describePolicy(resolvePolicy({}, tableConfig, store.uri, stored, undefined, { guard: false }));
  const settings = (Object.keys(DEFAULT_SETTINGS) as PolicyField[]).map((field): EffectiveSetting => {
    const key = TABLE_CONFIG_KEYS[field];
    const { value, source } = described[key.replace("lakewarden.", "")]!;
    return { key, value, source, table_config: tableConfig[key] ?? null, lakewarden_config: stored[key] ?? null };
  });
  return { table: store.uri, stored_config: store.uriOf(STORED_CONFIG_KEY), config: stored, settings };
}

function describe(shown: ShownConfig): string {
  const rows = shown.settings.map((s) => [s.key, String(s.value ?? "none"), s.source === "default" ? "default" : s.source.split(" lakewarden.")[0]!]);
  let text = textTable(["setting", "value", "from"], rows);
  const shadowed = shown.settings.filter((s) => s.table_config !== null && s.lakewarden_config !== null);
  for (const s of shadowed) {
    text += `note: ${s.key} = ${JSON.stringify(s.lakewarden_config)} in lakewarden config is overridden by the table's own config (${JSON.stringify(s.table_config)})\n`;
  }
  return text;
}
