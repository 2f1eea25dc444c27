/** scripts/audit.ts: which `npm audit --json` outputs pass, fail, or count as an unreachable endpoint. */
import { describe, expect, it } from "vitest";
import { judgeAudit } from "../../scripts/audit.ts";

const DOC = "| [GHSA-p6v2-xcpg-h6xw](…) | high | rate limiter … |";

/** A format-2 report with one direct advisory per entry of `ids` (all in better-auth). */
function report(ids: string[]) {
  return JSON.stringify({
    auditReportVersion: 2,
    vulnerabilities: {
      "better-auth": {
        name: "better-auth",
        severity: "high",
        via: ids.map((id) => ({
          source: 1,
          name: "better-auth",
          title: `advisory ${id}`,
          url: `https://github.com/advisories/${id}`,
          severity: "high",
        })),
      },
      // A package vulnerable only through better-auth: named by string, no advisory of its own.
      "some-wrapper": { name: "some-wrapper", severity: "high", via: ["better-auth"] },
    },
    metadata: {},
  });
}

describe("judgeAudit", () => {
  it("passes when every reported advisory is listed (case-insensitively) in docs/security.md", () => {
    const verdict = judgeAudit(report(["GHSA-P6V2-XCPG-H6XW"]), DOC);
    expect(verdict).toMatchObject({
      kind: "pass",
      listed: [{ id: "GHSA-P6V2-XCPG-H6XW", packageName: "better-auth" }],
    });
    expect(judgeAudit(report([]), DOC)).toEqual({ kind: "pass", listed: [] });
  });

  it("fails on an advisory the document does not list, naming it once", () => {
    const verdict = judgeAudit(
      report(["GHSA-p6v2-xcpg-h6xw", "GHSA-2222-3333-4444", "GHSA-2222-3333-4444"]),
      DOC,
    );
    expect(verdict.kind).toBe("fail");
    if (verdict.kind !== "fail") return;
    expect(verdict.unlisted.map((a) => a.id)).toEqual(["GHSA-2222-3333-4444"]);
    expect(verdict.listed.map((a) => a.id)).toEqual(["GHSA-p6v2-xcpg-h6xw"]);
  });

  it("an HTTP refusal or a network error of the audit endpoint is 'unreachable' (exit 0, loudly)", () => {
    const http405 = JSON.stringify({
      message: "405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk",
      statusCode: 405,
      error: { summary: "", detail: "" },
    });
    expect(judgeAudit(http405, DOC)).toMatchObject({
      kind: "unreachable",
      reason: expect.stringContaining("405"),
    });
    const offline = JSON.stringify({
      error: { code: "ENOTFOUND", summary: "request to https://registry.npmjs.org failed" },
    });
    expect(judgeAudit(offline, DOC).kind).toBe("unreachable");
    expect(judgeAudit(JSON.stringify({ error: { code: "EAI_AGAIN", summary: "" } }), DOC).kind).toBe(
      "unreachable",
    );
  });

  it("any other failure breaks the run: no lock file, no JSON", () => {
    const noLock = JSON.stringify({
      error: { code: "ENOLOCK", summary: "This command requires an existing lockfile." },
    });
    expect(judgeAudit(noLock, DOC)).toMatchObject({
      kind: "broken",
      reason: expect.stringContaining("lockfile"),
    });
    expect(judgeAudit("npm ERR! something", DOC).kind).toBe("broken");
  });
});
