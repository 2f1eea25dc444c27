/**
 * `service-auth dev`: the type checker's lines come prefixed with `[tsc]`, in plain text (no
 * colour escapes, which would show raw after the prefix).
 */
import { spawn } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_ARGS, PROCESS_TEST_TIMEOUT, ROOT } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

describe("dev loop", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("prints type errors as plain [tsc] lines", async () => {
    const project = tempDir();
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"), "dir");
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022" },
        files: ["entry.ts"],
      }),
    );
    writeFileSync(
      join(project, "entry.ts"),
      'const n: number = "not a number";\nsetInterval(() => n, 60_000);\n',
    );
    // Outside the root, `--import tsx` is looked up from the project: give tsx's file.
    const nodeArgs = NODE_ARGS.map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a));
    const child = spawn(
      process.execPath,
      [...nodeArgs, join(ROOT, "src/app/cli/bin.ts"), "dev", "entry.ts"],
      {
        cwd: project,
        env: { ...process.env, LOG_LEVEL: "silent" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await eventually(() => expect(output).toMatch(/^\[tsc\] .*error TS2322/m), 120_000);
      const tscLines = output.split("\n").filter((line) => line.startsWith("[tsc]"));
      expect(tscLines.length).toBeGreaterThan(0);
      for (const line of tscLines) expect(line).not.toContain("\u001b[");
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
