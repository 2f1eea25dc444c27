/**
 * `DATABASE_DURABILITY`: when a write is acknowledged. `primary` (the default): once the
 * PostgreSQL primary committed it, replicated as the server is configured (a synchronous standby
 * when the failover manager keeps one). `standby`: only once a streaming standby has also flushed
 * it (`storage/postgres/standby-ack.ts`), whatever the server's replication settings are at that
 * moment; a write no standby confirms is answered 503 instead.
 */
import { type SettingProblem, SettingsRefusal, settingProblem } from "./problems.ts";

/** When a write is acknowledged (see the module comment). */
export type Durability = "primary" | "standby";

/**
 * `DATABASE_DURABILITY` of `env` (undefined when unset). `database` says what `DATABASE_URL` is:
 * `standby` needs PostgreSQL. Throws a {@link SettingsRefusal} naming the problem.
 */
export function durabilitySetting(
  env: Record<string, string | undefined>,
  database: "postgres" | "sqlite" = "postgres",
): Durability | undefined {
  const raw = env.DATABASE_DURABILITY?.trim();
  if (!raw) return undefined;
  const value = raw.toLowerCase();
  let problem: SettingProblem | undefined;
  if (value !== "primary" && value !== "standby") {
    problem = settingProblem(
      "DATABASE_DURABILITY",
      raw,
      'neither "primary" nor "standby"',
      "set DATABASE_DURABILITY=standby (a write is acknowledged once a standby flushed it) or primary (the default)",
    );
  } else if (value === "standby" && database !== "postgres") {
    problem = settingProblem(
      "DATABASE_DURABILITY",
      raw,
      "needs a PostgreSQL DATABASE_URL with streaming standbys",
      "set DATABASE_URL=postgres://… to the primary, or unset DATABASE_DURABILITY",
    );
  }
  if (problem) throw new SettingsRefusal([problem]);
  return value as Durability;
}
