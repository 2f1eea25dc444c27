/**
 * Dependency audit for CI: runs `npm audit --json` and fails on an advisory that
 * docs/security.md does not list (every advisory reaching the pinned Better Auth is there, with
 * its mitigation or refusal). When the audit endpoint cannot be reached it says so loudly and
 * exits 0: an unreachable registry must not fail the build, and must not pass unnoticed either.
 *
 * Usage: `npx tsx scripts/audit.ts` (exit 1 on an unlisted advisory or an audit that broke).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** One advisory npm reports, by its GHSA id (or its URL when it has none). */
export interface ReportedAdvisory {
  id: string;
  title: string;
  severity: string;
  packageName: string;
}

export type AuditVerdict =
  | { kind: "unreachable"; reason: string }
  | { kind: "broken"; reason: string }
  | { kind: "pass"; listed: ReportedAdvisory[] }
  | { kind: "fail"; unlisted: ReportedAdvisory[]; listed: ReportedAdvisory[] };

/** Error codes and HTTP answers meaning "the audit endpoint could not be reached or refused". */
const NETWORK_CODES =
  /^(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|EPROTO|ECONNABORTED|ERR_SOCKET_TIMEOUT|E\d{3})$/;

const GHSA = /GHSA(-[23456789cfghjmpqrvwx]{4}){3}/i;

/** The advisories of an `npm audit --json` report (format 2), one entry per advisory. */
function advisoriesOf(report: { vulnerabilities?: Record<string, { via?: unknown[] }> }): ReportedAdvisory[] {
  const byId = new Map<string, ReportedAdvisory>();
  for (const [packageName, vulnerability] of Object.entries(report.vulnerabilities ?? {})) {
    for (const via of vulnerability.via ?? []) {
      // A string names another vulnerable package (a transitive effect); its own entry has the advisory.
      if (typeof via !== "object" || via === null) continue;
      const v = via as { url?: string; title?: string; severity?: string; name?: string };
      const url = String(v.url ?? "");
      const id = url.match(GHSA)?.[0] ?? url;
      if (!byId.has(id)) {
        byId.set(id, {
          id,
          title: String(v.title ?? ""),
          severity: String(v.severity ?? "unknown"),
          packageName: String(v.name ?? packageName),
        });
      }
    }
  }
  return [...byId.values()];
}

/** Judges `npm audit --json` output against the text of docs/security.md. */
export function judgeAudit(stdout: string, documented: string): AuditVerdict {
  let parsed: any;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { kind: "broken", reason: `npm audit printed no JSON: ${stdout.slice(0, 200)}` };
  }
  if (parsed && typeof parsed === "object" && "auditReportVersion" in parsed) {
    const all = advisoriesOf(parsed);
    const text = documented.toLowerCase();
    const listed = all.filter((a) => text.includes(a.id.toLowerCase()));
    const unlisted = all.filter((a) => !listed.includes(a));
    return unlisted.length ? { kind: "fail", unlisted, listed } : { kind: "pass", listed };
  }
  const code = String(parsed?.error?.code ?? parsed?.code ?? "");
  const status = Number(parsed?.statusCode ?? 0);
  const message = String(parsed?.message ?? parsed?.error?.summary ?? "");
  if (status >= 400 || NETWORK_CODES.test(code) || /network|fetch failed|socket|timed out/i.test(message)) {
    return { kind: "unreachable", reason: message || code || `HTTP ${status}` };
  }
  return { kind: "broken", reason: message || code || "npm audit failed without a reason" };
}

/** Runs `npm audit --json` in `cwd`; its exit code is ignored (non-zero whenever it finds anything). */
function runNpmAudit(cwd: string): Promise<string> {
  return new Promise((resolve) => {
    execFile("npm", ["audit", "--json"], { cwd, maxBuffer: 64 * 1024 * 1024 }, (_error, stdout) =>
      resolve(String(stdout)),
    );
  });
}

const line = (a: ReportedAdvisory) => `  ${a.id} (${a.severity}) in ${a.packageName}: ${a.title}`;

async function main(): Promise<number> {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const documented = await readFile(join(root, "docs/security.md"), "utf8");
  const verdict = judgeAudit(await runNpmAudit(root), documented);
  switch (verdict.kind) {
    case "unreachable":
      console.warn(
        [
          "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
          `!!! DEPENDENCY AUDIT SKIPPED: the npm audit endpoint could not be reached (${verdict.reason}).`,
          "!!! No advisory was checked. Run `npx tsx scripts/audit.ts` where the registry answers.",
          "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        ].join("\n"),
      );
      return 0;
    case "broken":
      console.error(`dependency audit: npm audit failed: ${verdict.reason}`);
      return 1;
    case "pass":
      console.log(`dependency audit: ${verdict.listed.length} advisories, all listed in docs/security.md`);
      for (const a of verdict.listed) console.log(line(a));
      return 0;
    case "fail":
      console.error(
        "dependency audit: advisories not listed in docs/security.md (mitigate or refuse, then list them):",
      );
      for (const a of verdict.unlisted) console.error(line(a));
      return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main();
}
