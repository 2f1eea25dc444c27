/**
 * The README's code blocks, read the way a newcomer copies them: the newcomer test runs these very
 * commands and writes these very files, so the README and the test cannot drift apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/process.ts";

export interface CodeBlock {
  /** The fence's language (`sh`, `js`, …). */
  lang: string;
  code: string;
  /** The prose between the previous block (or the heading) and this one. */
  before: string;
}

/** The text of the `## heading` section of README.md, up to the next `## `. */
export function readmeSection(heading: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "## ${heading}"`);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of `section`, in order. */
export function codeBlocks(section: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let last = 0;
  for (let m = fence.exec(section); m; m = fence.exec(section)) {
    blocks.push({ lang: m[1], code: m[2], before: section.slice(last, m.index) });
    last = m.index + m[0].length;
  }
  return blocks;
}

/**
 * The commands of a shell block: comment lines dropped, `\` continuations joined; a trailing
 * comment stays (the shell ignores it).
 */
export function shellCommands(code: string): string[] {
  const joined = code.replace(/\\\n\s*/g, "");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** The files a section shows: each code block right after a paragraph that starts with its name (`app.mjs` …). */
export function namedFiles(section: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const block of codeBlocks(section)) {
    const paragraph =
      block.before
        .trim()
        .split(/\n\s*\n/)
        .at(-1) ?? "";
    const name = paragraph.match(/^`([\w.-]+\.(?:mjs|js|ts))`/)?.[1];
    if (name) files.set(name, block.code);
  }
  return files;
}
