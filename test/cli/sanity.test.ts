import { describe, expect, it } from "vitest";
import { runCli } from "../../lib/cli/run-cli.ts";
import { BufferIO } from "../../lib/cli/io.ts";

describe("lakewarden CLI", () => {
  it("prints help naming its commands", async () => {
    const io = new BufferIO();
    const code = await runCli(["--help"], io);
    expect(code).toBe(0);
    expect(io.stdout).toContain("versions");
  });
});
