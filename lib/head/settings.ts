/**
 * Per-table head settings, from the table's own config (Lance: manifest `config` keys prefixed
 * `lakewarden.`), overridable per call. A bad value is an error naming the table's version
 * file, not a silent default: a head written with the wrong codec or budget would go unnoticed.
 */
import { TableFormatError } from "../formats/errors.ts";
import type { TableSnapshot } from "../formats/table-format.ts";
import type { HeadCodec } from "./codec.ts";
import { DEFAULT_COMPRESSION } from "./compression.ts";
import type { BodyCompression } from "./header.ts";
import { DEFAULT_HEAD_CODEC, headCodecs } from "./registry.ts";
import type { HeadCodecRegistry } from "./registry.ts";

export const HEAD_CODEC_CONFIG_KEY = "lakewarden.head_codec";
export const HEAD_INLINE_BYTES_CONFIG_KEY = "lakewarden.head_inline_bytes";
export const DEFAULT_HEAD_INLINE_BYTES = 1024 * 1024;

/** A `lakewarden.*` table setting or head option that cannot be used. */
export class InvalidHeadSettingError extends TableFormatError {}

export interface HeadSettingOverrides {
  codec?: string | HeadCodec;
  inlineBudgetBytes?: number;
  compression?: BodyCompression;
}

export interface HeadSettings {
  codec: HeadCodec;
  inlineBudgetBytes: number;
  compression: BodyCompression;
}

export function resolveHeadSettings(snapshot: TableSnapshot, uri: string, overrides: HeadSettingOverrides = {}, registry: HeadCodecRegistry = headCodecs): HeadSettings {
  const codecSetting = overrides.codec ?? snapshot.config[HEAD_CODEC_CONFIG_KEY] ?? DEFAULT_HEAD_CODEC;
  const codec = typeof codecSetting === "string" ? registry.get(codecSetting) : codecSetting;
  if (!codec) {
    throw new InvalidHeadSettingError(uri, `head codec ${JSON.stringify(codecSetting)} is unknown (known: ${registry.names().join(", ")})`);
  }
  const budgetSetting = overrides.inlineBudgetBytes ?? snapshot.config[HEAD_INLINE_BYTES_CONFIG_KEY] ?? DEFAULT_HEAD_INLINE_BYTES;
  const inlineBudgetBytes = typeof budgetSetting === "number" ? budgetSetting : /^\d+$/.test(budgetSetting) ? Number(budgetSetting) : Number.NaN;
  if (!Number.isSafeInteger(inlineBudgetBytes) || inlineBudgetBytes < 0) {
    throw new InvalidHeadSettingError(uri, `${HEAD_INLINE_BYTES_CONFIG_KEY} ${JSON.stringify(budgetSetting)} is not a byte count`);
  }
  return { codec, inlineBudgetBytes, compression: overrides.compression ?? DEFAULT_COMPRESSION };
}
