/**
 * Reads PostgreSQL's statement log (`log_statement=all`, `log_line_prefix=%a@`) for the floor
 * tests: the statements of one transaction of one application, told apart from the server's own
 * background transactions by a parameter value only the request's transaction carries.
 */
import { readFileSync } from "node:fs";
import { eventually } from "./wait.ts";

/**
 * The statements (BEGIN to COMMIT) of the first transaction `application` ran after byte `from`
 * of `log` whose bound parameters include `needle`, once it is all there.
 */
export function loggedTransaction(
  log: string,
  application: string,
  from: number,
  needle: string,
): Promise<string[]> {
  return eventually(() => {
    const lines = readFileSync(log)
      .subarray(from)
      .toString("utf8")
      .split("\n")
      .filter((line) => line.startsWith(`${application}@`));
    let current: string[] | undefined;
    let carriesNeedle = false;
    for (const line of lines) {
      if (/^[^@]*@DETAIL:\s+parameters:/.test(line)) {
        if (current && line.includes(needle)) carriesNeedle = true;
        continue;
      }
      // "statement: <text>" for simple queries, "execute <name>: <text>" for prepared ones.
      const logged = /^[^@]*@LOG:\s+(statement|execute [^:]+):\s(.*)$/.exec(line);
      if (!logged) continue;
      const statement = logged[2];
      if (statement.startsWith("BEGIN")) [current, carriesNeedle] = [[], false];
      current?.push(statement);
      if (statement === "COMMIT" && current) {
        if (carriesNeedle) return current;
        current = undefined;
      }
    }
    throw new Error(`no whole transaction from ${application} with ${needle} yet: ${lines.join("\n")}`);
  });
}
