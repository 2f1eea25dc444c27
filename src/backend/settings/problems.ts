/**
 * Setting problems, gathered before refusing: each reader of a setting throws a
 * {@link SettingError}; a {@link SettingsCheck} collects them all, so a start is refused once,
 * naming every setting to fix (what is wrong, the value with secrets masked, how to fix it).
 */
import { StartRefusal } from "../start-refusal.ts";
import { maskSettingValue } from "./mask.ts";

/**
 * One setting that cannot work.
 *
 * @example
 * ```ts
 * import type { SettingProblem } from "service-auth/server";
 *
 * const problem: SettingProblem = {
 *   name: "SMTP_URL",
 *   problem: "is not set (production sends real mail)",
 *   fix: "set SMTP_URL=smtp://user:password@host:587",
 * };
 * check.add(problem);
 * ```
 */
export interface SettingProblem {
  /** The setting's name, e.g. `DATABASE_URL`. */
  name: string;
  /** Its value with secrets masked; absent when the setting is not set. */
  value?: string;
  /** What is wrong, e.g. `unknown scheme "mysql:"`. */
  problem: string;
  /** How to fix it, e.g. `use postgres://…`. */
  fix: string;
}

/**
 * A problem of setting `name`; `rawValue` is masked here, so no caller can forget to.
 *
 * @example
 * ```ts
 * import { settingProblem } from "service-auth/server";
 *
 * const raw = process.env.UPLOAD_DIR;
 * if (!raw) check.add(settingProblem("UPLOAD_DIR", raw, "is not set", "set UPLOAD_DIR=/var/lib/app/uploads"));
 * ```
 */
export function settingProblem(
  name: string,
  rawValue: string | undefined,
  problem: string,
  fix: string,
): SettingProblem {
  return rawValue === undefined
    ? { name, problem, fix }
    : { name, value: maskSettingValue(name, rawValue), problem, fix };
}

/** One problem as text: `NAME="value": problem (fix: …)`. */
export function formatSettingProblem(p: SettingProblem): string {
  const value = p.value === undefined ? "" : `=${JSON.stringify(p.value)}`;
  return `${p.name}${value}: ${p.problem}\n    fix: ${p.fix}`;
}

/**
 * One setting's problem, thrown by the function reading it (a {@link StartRefusal}: uncollected,
 * as from `startService`'s own `openEngine`, it still reaches the operator as one report).
 *
 * @example
 * ```ts
 * import { SettingError, settingProblem } from "service-auth/server";
 *
 * function maxUploadBytes(env = process.env): number {
 *   const n = Number(env.MAX_UPLOAD_BYTES ?? 10_000_000);
 *   if (!Number.isInteger(n) || n <= 0)
 *     throw new SettingError(settingProblem("MAX_UPLOAD_BYTES", env.MAX_UPLOAD_BYTES, "not a positive whole number", "set MAX_UPLOAD_BYTES=10000000"));
 *   return n;
 * }
 * const limit = check.read(() => maxUploadBytes()); // noted in a SettingsCheck, not thrown
 * ```
 */
export class SettingError extends StartRefusal {
  override name = "SettingError";
  constructor(readonly problem: SettingProblem) {
    super(formatSettingProblem(problem));
  }
}

/**
 * The start refused for every problem found at once; the message lists them all.
 *
 * @example
 * ```ts
 * import { SettingsRefusal } from "service-auth/server";
 *
 * try {
 *   check.refuseIfAny();
 * } catch (error) {
 *   if (error instanceof SettingsRefusal) console.error(error.problems.map((p) => p.name).join(", "));
 *   throw error;
 * }
 * ```
 */
export class SettingsRefusal extends StartRefusal {
  override name = "SettingsRefusal";
  constructor(readonly problems: readonly SettingProblem[]) {
    const count = problems.length === 1 ? "1 setting" : `${problems.length} settings`;
    super(
      `refusing to start: ${count} to fix\n${problems.map((p) => `  ${formatSettingProblem(p)}`).join("\n")}`,
    );
  }
}

/**
 * Collects the problems of many settings, then refuses once with all of them.
 *
 * @example
 * ```ts
 * import { readServiceSettings, SettingsCheck, schemaCheckSetting } from "service-auth/server";
 *
 * const check = new SettingsCheck();
 * const settings = readServiceSettings(check);
 * const schemaCheck = check.read(() => schemaCheckSetting());
 * check.refuseIfAny(); // one SettingsRefusal naming every setting to fix
 * ```
 */
export class SettingsCheck {
  private readonly found: SettingProblem[] = [];

  /** The problems noted so far. */
  get problems(): readonly SettingProblem[] {
    return this.found;
  }

  /**
   * `read()`'s value, or `undefined` with the problems it threw noted (a {@link SettingError}, or
   * a {@link SettingsRefusal} of a reader that checks several settings); other errors pass.
   */
  read<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (error) {
      if (error instanceof SettingError) this.found.push(error.problem);
      else if (error instanceof SettingsRefusal) this.found.push(...error.problems);
      else throw error;
      return undefined;
    }
  }

  /** Notes problems found otherwise (e.g. the auth integration's). */
  add(...problems: SettingProblem[]): void {
    this.found.push(...problems);
  }

  /** Throws one {@link SettingsRefusal} naming every problem noted, if there is any. */
  refuseIfAny(): void {
    if (this.found.length > 0) throw new SettingsRefusal(this.found);
  }
}
