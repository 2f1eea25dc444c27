/** Renders benchmark rows as one markdown table. */
import type { BenchRow } from "./types.ts";

const cellText = (cell: string) => cell.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** A markdown table with a Group column; rows keep their order. */
export function markdownTable(sections: { group: string; rows: BenchRow[] }[]): string {
  const header = ["Group", "Benchmark", "Result", "p50", "p99", "Goal", "Met", "Notes"];
  const lines = [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`];
  for (const { group, rows } of sections) {
    for (const r of rows) {
      const met = r.ok === undefined ? "" : r.ok ? "yes" : "**no**";
      const cells = [group, r.benchmark, r.result, r.p50 ?? "", r.p99 ?? "", r.goal ?? "", met, r.note ?? ""];
      lines.push(`| ${cells.map(cellText).join(" | ")} |`);
    }
  }
  return lines.join("\n");
}
