/**
 * `service-auth init [DIR]` (issue 46, item 3): the new app's files, run as they are: started with
 * `npm start`'s command it serves its page and the page's bundle (service-auth/client), and its own
 * `npm test` passes. `node_modules` holds what `npm install` would bring (the package, Hono, Better
 * Auth), linked from this repository.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVICE_AUTH_BIN, spawnStart } from "../helpers/example-server.ts";
import { linkInstall } from "../helpers/init-app.ts";
import { NODE_ARGS, PROCESS_TEST_TIMEOUT, runTsx } from "../helpers/process.ts";
import { tempDatabaseFile, tempDir } from "../helpers/temp.ts";

/** `npm test` in `dir` (node --test), with the package's sources as this repository runs them. */
function npmTest(dir: string): Promise<{ code: number | null; output: string }> {
  const loader = NODE_ARGS.map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a)).join(" ");
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--test"], {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: loader, DATABASE_URL: undefined, SITE_URL: undefined },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => done({ code, output }));
  });
}

describe("service-auth init", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("makes an app that starts, serves its page and bundle, and passes its own test", async () => {
    const parent = tempDir();
    const made = await runTsx(SERVICE_AUTH_BIN, ["init", "my-notes"], { cwd: parent });
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/cd my-notes && npm install && npm start/);
    const dir = join(parent, "my-notes");
    for (const file of ["package.json", "app.mjs", "page.html", "page.mjs", "app.test.mjs"])
      expect(existsSync(join(dir, file)), file).toBe(true);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({
      name: "my-notes",
      type: "module",
      scripts: { start: "service-auth start", test: "node --test" },
    });
    expect(readFileSync(join(dir, "page.mjs"), "utf8")).toMatch(/from "service-auth\/client"/);
    linkInstall(dir);

    const server = await spawnStart(["start"], { DATABASE_URL: tempDatabaseFile() }, { cwd: dir });
    try {
      const page = await fetch(`${server.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<script type="module" src="\/page\.js">/);
      const script = await fetch(`${server.url}/page.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/javascript/);
      expect(await script.text()).toMatch(/notes:list/);
    } finally {
      await server.stop();
    }

    const tested = await npmTest(dir);
    expect(tested.output).toMatch(/\bpass 1\b/);
    expect(tested.code).toBe(0);
  });

  it("refuses a folder that is not empty, and writes nothing there", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "notes.txt"), "mine");
    const res = await runTsx(SERVICE_AUTH_BIN, ["init", dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/is not empty/);
    expect(existsSync(join(dir, "app.mjs"))).toBe(false);
  });
});
