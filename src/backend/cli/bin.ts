#!/usr/bin/env node
/**
 * The `service-auth` command (`npm run cli --` in this repository): `start ENTRY` runs an app's
 * entry module in this process, `dev ENTRY` runs it in the development loop (dev.ts), and every
 * other command is the CLI's (main.ts).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { StartRefusal } from "../start-refusal.ts";
import { dev } from "./dev.ts";
import { main, reportFailure, USAGE_HINT } from "./main.ts";

const [command, entry] = process.argv.slice(2);

if (command === "start" || command === "dev") {
  if (!entry) {
    process.stderr.write(`${command} needs the app's entry module, e.g. main.mjs\n${USAGE_HINT}\n`);
    process.exit(2);
  }
  const file = resolve(entry);
  if (command === "dev") dev(file);
  else
    await import(pathToFileURL(file).href).catch((error: NodeJS.ErrnoException) => {
      // A refused start (settings, database, port) is a report for the operator, not a stack trace.
      if (error instanceof StartRefusal) {
        process.stderr.write(`${error.message}\n`);
        process.exit(1);
      }
      // Plain node cannot load TypeScript; say what does instead of a loader stack trace.
      if (error.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
      process.stderr.write(
        `cannot load ${entry} with plain node: use JavaScript, or \`service-auth dev\` (tsx)\n`,
      );
      process.exit(1);
    });
} else {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => process.exit(reportFailure(error)),
  );
}
