import { expect, it } from "vitest";
import { TABLE_FORMATS } from "../../lib/formats/index.ts";
import { FORMAT_VERSION_FOLDERS } from "../../lib/formats/version-folders.ts";

it("names every registered format's version folder, in the registry's order", () => {
  expect(FORMAT_VERSION_FOLDERS).toEqual(TABLE_FORMATS.map((format) => ({ name: format.name, versionsPrefix: format.versionsPrefix })));
});
