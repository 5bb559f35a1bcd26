import { describe, expect, it } from "vitest";
import { textTable } from "../../lib/cli/text-table.ts";

describe("textTable", () => {
  it("left-aligns columns two spaces apart, without trailing blanks", () => {
    expect(
      textTable(
        ["key", "size"],
        [
          ["a", "10 B"],
          ["longer/key", "1.0 KiB"],
        ],
      ),
    ).toBe("key         size\na           10 B\nlonger/key  1.0 KiB\n");
  });

  it("prints more rows than a call can take as arguments (a dry run planning 200,000 deletes)", () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [`data/${i}.lance`, "delete"]);
    const lines = textTable(["key", "action"], rows).split("\n");
    expect(lines).toHaveLength(200_002);
    expect(lines[200_000]).toBe("data/199999.lance  delete");
  });
});
