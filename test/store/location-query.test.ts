/**
 * A file: URI names a path; a query or fragment is no part of it, and dropping one silently would
 * run on a table the user did not name (`file:///lake/t?x=1` read as `/lake/t`). Refused, one line.
 * An encoded `?` or `#` (`%3F`, `%23`) is part of the path's name and stays.
 */
import { describe, expect, test } from "vitest";
import { InvalidLocationError } from "../../lib/store/errors.ts";
import { parseLocation } from "../../lib/store/index.ts";

describe("file: URIs with a query or fragment", () => {
  test.each([
    ["file:///tmp/lake/t?x=1", /has a query \("\?x=1"\)/],
    ["file:///tmp/lake/t?", /has a query/],
    ["file:///tmp/lake/t#v3", /has a fragment \("#v3"\)/],
    ["FILE:///tmp/lake/t?x=1#y", /has a query/],
  ])("%s is refused", (location, message) => {
    let thrown: unknown;
    try {
      parseLocation(location);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidLocationError);
    const error = thrown as InvalidLocationError;
    expect(error.message).toMatch(message);
    expect(error.message).toContain(location);
    expect(error.message).not.toContain("\n");
  });

  test("an encoded ? or # is part of the folder's name", () => {
    expect(parseLocation("file:///tmp/lake/t%3Fx=1")).toMatchObject({ kind: "local", path: "/tmp/lake/t?x=1" });
    expect(parseLocation("file:///tmp/lake/t%23v3")).toMatchObject({ kind: "local", path: "/tmp/lake/t#v3" });
  });

  test("a local path (not a URI) may hold ? and # in its names", () => {
    expect(parseLocation("/tmp/lake/t?x=1")).toMatchObject({ kind: "local", path: "/tmp/lake/t?x=1" });
  });
});
