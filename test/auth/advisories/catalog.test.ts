/** docs/security.md and the advisory catalog name the same advisories. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ADVISORY, acceptedAdvisories, REFUSED_PLUGINS } from "../../../src/auth/advisories/catalog.ts";

const doc = readFileSync(new URL("../../../docs/security.md", import.meta.url), "utf8");

describe("advisory catalog", () => {
  it("every advisory the code acts on is listed in docs/security.md", () => {
    const ids = [...Object.values(ADVISORY), ...REFUSED_PLUGINS.flatMap((p) => p.advisories)];
    for (const id of ids) expect(doc, id).toContain(id);
  });

  it("accepted ids: comma-separated or an array, trimmed, any case; empty items ignored", () => {
    const accepted = acceptedAdvisories(" ghsa-p6v2-xcpg-h6xw ,, CVE-2026-110862");
    expect(accepted.has("GHSA-p6v2-xcpg-h6xw")).toBe(true);
    expect(accepted.has("cve-2026-110862")).toBe(true);
    expect(accepted.has("")).toBe(false);
    expect(acceptedAdvisories(["GHSA-2vg6-77g8-24mp"]).has("GHSA-2VG6-77G8-24MP")).toBe(true);
    expect(acceptedAdvisories(undefined).has("GHSA-2vg6-77g8-24mp")).toBe(false);
  });
});
