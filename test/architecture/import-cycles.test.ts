/**
 * No import cycles in src/: each module builds on modules below it (docs/architecture.md), so a
 * cycle means a shared type or helper belongs in a leaf module. Type-only imports count too: a
 * type cycle is the same tangle, only erased at runtime.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

/** Relative module specifiers of `text`: static imports and re-exports (type-only included), dynamic imports. */
function relativeSpecifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm)) {
    out.push(m[1]);
  }
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]);
  return out.filter((spec) => spec.startsWith("."));
}

/** file → files it imports, paths relative to the repository root. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const targets = relativeSpecifiers(readFileSync(file, "utf8")).map((spec) =>
      relative(root, resolve(dirname(file), spec)),
    );
    graph.set(relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle, as the modules of one strongly connected component (Tarjan), sorted. */
function findCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe("import cycles", () => {
  it("the detector finds direct, indirect and self cycles, and nothing in a tree", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c", "d"]],
      ["c", ["a"]],
      ["d", []],
      ["e", ["e"]],
      ["f", ["d", "missing"]],
    ]);
    expect(findCycles(graph).sort()).toEqual([["a", "b", "c"], ["e"]]);
    expect(
      findCycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("the parser sees value, type-only, multi-line, re-export and dynamic imports", () => {
    const text = [
      'import { a } from "./a.ts";',
      'import type { B } from "../b.ts";',
      "import {",
      "  c,",
      "  type C,",
      '} from "./c.ts";',
      'export type { D } from "./d.ts";',
      'export * from "./e.ts";',
      'import "./f.ts";',
      'const g = await import("./g.ts");',
      'import { h } from "node:fs";',
      ' * import { not } from "./comment-in-prose.ts" is still a line starting with an asterisk',
    ].join("\n");
    expect(relativeSpecifiers(text)).toEqual([
      "./a.ts",
      "../b.ts",
      "./c.ts",
      "./d.ts",
      "./e.ts",
      "./f.ts",
      "./g.ts",
    ]);
  });

  it("src/ has none", () => {
    const graph = importGraph(join(root, "src"));
    // The graph is the real one: a known edge is in it.
    expect(graph.get("src/backend/runtime.ts")).toContain("src/backend/auth/authenticator.ts");
    expect(findCycles(graph)).toEqual([]);
  });
});
