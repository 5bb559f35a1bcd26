/**
 * Reader pins from the command line: `lakewarden pin <table> <version> --ttl 2h [--note ...]`,
 * `lakewarden pins list <table>` and `lakewarden unpin <table> <pin-id>`. A pin is an object under
 * `_lakewarden/pins/`; cleanup keeps the pinned version and its files until the pin expires.
 */
import type { Command } from "commander";
import type { ProgramContext } from "../program.ts";
import { UsageError } from "../errors.ts";
import { parseDurationFlag } from "../flags.ts";
import { catalogFormatOption, printJson, runOnTable, withCatalogOptions, withOutputOptions, TABLE_ARGUMENT_HELP } from "../table-command.ts";
import type { OutputOptions } from "../table-command.ts";
import { textTable } from "../text-table.ts";
import { resolveFormat } from "../../formats/index.ts";
import { NotFoundError } from "../../store/errors.ts";
import { PINS_PREFIX, assertPinId, createPin, readPins, releasePin } from "../../pins/pins.ts";
import type { PinRecord } from "../../pins/pins.ts";

interface PinFlags extends OutputOptions {
  ttl: string;
  note?: string;
}

export function registerPinCommands(program: Command, { io }: ProgramContext): void {
  withOutputOptions(
    withCatalogOptions(
      program
        .command("pin")
        .description("keep a version and its files from cleanup until the pin expires")
        .argument("<table>", TABLE_ARGUMENT_HELP)
        .argument("<version>", "the version to keep (a live version number)")
        .requiredOption("--ttl <duration>", "how long the pin holds, e.g. 2h, 30m, 7d (renew it by pinning again)")
        .option("--note <text>", "free text shown by pins list and in cleanup's reasons"),
    ),
  ).action(async (table: string, versionText: string, flags: PinFlags) => {
    const ttlMs = parseDurationFlag("--ttl", flags.ttl, { positive: true });
    const version = Number(versionText);
    if (!/^\d+$/.test(versionText) || !Number.isSafeInteger(version)) throw new UsageError(`<version> = ${JSON.stringify(versionText)} is not a version number`);
    const pin = await runOnTable(table, flags, io, async (store) => {
      const format = (await catalogFormatOption(flags, store)).format ?? (await resolveFormat(store));
      let file;
      try {
        file = await format.findVersionFile(store, version);
      } catch (error) {
        if (error instanceof NotFoundError)
          throw new NotFoundError(`${store.uri}: version ${version} does not exist (never committed, or already cleaned up): nothing pinned`, { uri: store.uri });
        throw error;
      }
      const view = await format.readForCleanup(store, file);
      return createPin(store, { version, versionId: view.record.version_id, ttlMs, note: flags.note ?? null });
    });
    if (flags.json) printJson(io, pin);
    else io.out(`${pin.id}\n`);
  });

  const pins = program.command("pins").description(`reader pins (${PINS_PREFIX}): list them`);
  withOutputOptions(pins.command("list").description("every pin: version, expiry, note and writer (expired ones as ignored)").argument("<table>", TABLE_ARGUMENT_HELP)).action(
    async (table: string, flags: OutputOptions) => {
      const now = new Date();
      const read = await runOnTable(table, flags, io, (store) => readPins(store, now));
      if (flags.json) {
        printJson(io, { active: read.active, expired: read.expired, ignored: read.problems });
        return;
      }
      if (read.active.length === 0 && read.expired.length === 0 && read.problems.length === 0) {
        io.out("no pins\n");
        return;
      }
      const row = (pin: PinRecord, state: string) => [pin.id, String(pin.version), pin.expires_at, state, pin.note ?? "", pin.host ? `${pin.host}:${pin.pid}` : ""];
      io.out(
        textTable(
          ["pin", "version", "expires at", "state", "note", "written by"],
          [...read.active.map((p) => row(p, "holds")), ...read.expired.map((p) => row(p, "expired: ignored"))],
        ),
      );
      for (const problem of read.problems.filter((p) => !read.expired.some((e) => p.startsWith(`pin ${e.id} `)))) io.out(`${problem}\n`);
    },
  );

  withOutputOptions(
    program
      .command("unpin")
      .description("remove a pin by the id `pin` printed")
      .argument("<table>", TABLE_ARGUMENT_HELP)
      .argument("<pin-id>", "the pin's id, as pin printed or pins list shows"),
  ).action(async (table: string, id: string, flags: OutputOptions) => {
    try {
      assertPinId(id);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const removed = await runOnTable(table, flags, io, (store) => releasePin(store, id));
    if (!removed) throw new NotFoundError(`no pin ${id} on ${table}`, { uri: table });
    if (flags.json) printJson(io, { unpinned: id });
    else io.out(`unpinned ${id}\n`);
  });
}
