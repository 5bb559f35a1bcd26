/**
 * Codecs by name. Adding a codec is one file exporting a HeadCodec plus its entry below;
 * readers decode any head whose codec is registered here, writers pick one per table.
 */
import type { HeadCodec } from "./codec.ts";
import { arrowCodec } from "./codecs/arrow.ts";
import { jsonCodec } from "./codecs/json.ts";

export const DEFAULT_HEAD_CODEC = "arrow";

export class HeadCodecRegistry {
  private readonly codecs = new Map<string, HeadCodec>();

  constructor(codecs: readonly HeadCodec[] = []) {
    for (const codec of codecs) this.register(codec);
  }

  register(codec: HeadCodec): void {
    if (!/^[a-z0-9._-]{1,26}$/.test(codec.name)) throw new Error(`head codec name ${JSON.stringify(codec.name)} is not [a-z0-9._-]{1,26}`);
    if (this.codecs.has(codec.name)) throw new Error(`head codec ${codec.name} is already registered`);
    this.codecs.set(codec.name, codec);
  }

  get(name: string): HeadCodec | undefined {
    return this.codecs.get(name);
  }

  names(): string[] {
    return [...this.codecs.keys()];
  }
}

export const headCodecs = new HeadCodecRegistry([arrowCodec, jsonCodec]);
