/**
 * Every registered format's name and version folder, from the formats' name modules alone: what
 * table discovery needs (a folder holding one is a table), without loading the formats. The
 * schedule-cleanup function lists tables on every event and reads none; the whole registry
 * (index.ts) is 126 KiB of its minified bundle. A test holds this list equal to TABLE_FORMATS'.
 */
import { LOG_PREFIX } from "./delta/log-names.ts";
import { METADATA_PREFIX } from "./iceberg/metadata-names.ts";
import { VERSIONS_PREFIX } from "./lance/version-names.ts";
import type { TableFormat } from "./table-format.ts";

export const FORMAT_VERSION_FOLDERS: readonly Pick<TableFormat, "name" | "versionsPrefix">[] = [
  { name: "lance", versionsPrefix: VERSIONS_PREFIX },
  { name: "iceberg", versionsPrefix: METADATA_PREFIX },
  { name: "delta", versionsPrefix: LOG_PREFIX },
];
