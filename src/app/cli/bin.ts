#!/usr/bin/env node
/**
 * The `service-auth` command (`npm run cli --` in this repository). `init [DIR]` makes a new app
 * (init.ts), `start [APP]` serves an app
 * with every setting and rule (start-app.ts), `dev [APP]` does so in the development loop
 * (restarted on changes), and every other command is the platform CLI's (src/backend/cli/main.ts).
 * APP is the app's module or folder (default: the current folder's app.ts / app.mjs); a module
 * exporting no app is an entry that starts its service itself (embedding with `startService`).
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { appFile, exportedApp } from "../../backend/cli/app-file.ts";
import { dev } from "../../backend/cli/dev.ts";
import { main, reportFailure, USAGE_HINT } from "../../backend/cli/main.ts";
import { StartRefusal } from "../../backend/server.ts";

const [command, arg] = process.argv.slice(2);

/** A refused start (settings, database, port) is a report for the operator, not a stack trace. */
function refused(error: unknown): never {
  if (error instanceof StartRefusal) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  // Plain node cannot load TypeScript; say what does instead of a loader stack trace.
  if ((error as NodeJS.ErrnoException)?.code === "ERR_UNKNOWN_FILE_EXTENSION") {
    process.stderr.write(
      `cannot load ${arg} with plain node: use JavaScript, or \`service-auth dev\` (tsx)\n`,
    );
    process.exit(1);
  }
  throw error;
}

if (command === "init") {
  const { init } = await import("./init.ts");
  process.exit(
    init(process.argv.slice(3), {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    }),
  );
} else if (command === "start" || command === "dev") {
  const file = appFile(arg);
  if (!file) {
    process.stderr.write(
      `${command}: no app at ${arg ?? "this folder"}: give the app's module (its default export is defineApp(…)) or a folder with app.ts or app.mjs\n${USAGE_HINT}\n`,
    );
    process.exit(2);
  }
  // The loop restarts this command (`start APP`) whenever a file the app imports changes.
  if (command === "dev") dev(fileURLToPath(import.meta.url), ["start", file]);
  else {
    try {
      const app = exportedApp(await import(pathToFileURL(file).href));
      // Loaded only to start: the other commands need neither the auth nor Better Auth.
      const { startApp } = await import("../start-app.ts");
      if (app) await startApp(app as Parameters<typeof startApp>[0]);
    } catch (error) {
      refused(error);
    }
  }
} else {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => process.exit(reportFailure(error)),
  );
}
