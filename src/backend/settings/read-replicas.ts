/**
 * `DATABASE_READ_URLS` and `DATABASE_READ_WAIT_MS`: the streaming standbys that serve read
 * snapshots when fresh (`storage/postgres/read-replicas.ts`), and how long a read waits for one
 * to catch up before the primary answers it.
 */
import { maskSettingValue } from "./mask.ts";
import { type SettingProblem, SettingsRefusal, settingProblem } from "./problems.ts";

/** More replicas than this is a mistake in the list, not a deployment (each gets its own pools). */
export const MAX_READ_URLS = 16;
/** A longer wait makes a lagging replica slower than the primary it is there to relieve. */
export const MAX_READ_WAIT_MS = 10_000;

export interface ReadReplicaSettings {
  /** The standbys' URLs, in the order given; empty: reads run on the primary. */
  readConnectionStrings: string[];
  /** `DATABASE_READ_WAIT_MS`; undefined: the default (50 ms). */
  readWaitMs?: number;
}

const POSTGRES_PROTOCOL = /^postgres(ql)?:$/i;

/** Why `entry` cannot be a replica URL, or undefined when it can. */
function urlProblem(entry: string): string | undefined {
  if (!/^postgres(ql)?:\/\//i.test(entry)) return "is not a postgres:// URL";
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return "is not a valid URL";
  }
  if (!POSTGRES_PROTOCOL.test(url.protocol)) return "is not a postgres:// URL";
  if (!url.hostname) return "names no host";
  return undefined;
}

/**
 * The read replica settings of `env`. `primary` says what `DATABASE_URL` is: replicas need a
 * PostgreSQL primary. Throws a {@link SettingsRefusal} naming every problem.
 */
export function readReplicaSettings(
  env: Record<string, string | undefined>,
  primary: "postgres" | "sqlite" = "postgres",
): ReadReplicaSettings {
  const problems: SettingProblem[] = [];
  const raw = env.DATABASE_READ_URLS?.trim() ?? "";
  const entries = raw ? raw.split(",").map((e) => e.trim()) : [];
  const urls: string[] = [];
  if (entries.length && primary !== "postgres") {
    problems.push(
      settingProblem(
        "DATABASE_READ_URLS",
        maskList(raw),
        "read replicas need a PostgreSQL DATABASE_URL (the primary they stream from)",
        "set DATABASE_URL=postgres://… to the primary, or unset DATABASE_READ_URLS",
      ),
    );
  } else if (entries.length > MAX_READ_URLS) {
    problems.push(
      settingProblem(
        "DATABASE_READ_URLS",
        maskList(raw),
        `lists ${entries.length} URLs; at most ${MAX_READ_URLS}`,
        "list each standby once, separated by commas",
      ),
    );
  } else {
    entries.forEach((entry, i) => {
      const problem = entry ? urlProblem(entry) : "is empty";
      if (problem) {
        problems.push(
          settingProblem(
            "DATABASE_READ_URLS",
            entry,
            `entry ${i + 1} ${problem}`,
            "list standby URLs separated by commas, e.g. DATABASE_READ_URLS=postgres://user:password@replica1:5432/db,postgres://user:password@replica2:5432/db (percent-encode commas in passwords)",
          ),
        );
      } else if (urls.includes(entry)) {
        problems.push(
          settingProblem(
            "DATABASE_READ_URLS",
            entry,
            `entry ${i + 1} repeats an earlier one`,
            "list each standby once",
          ),
        );
      } else {
        urls.push(entry);
      }
    });
  }
  const wait = env.DATABASE_READ_WAIT_MS?.trim();
  let readWaitMs: number | undefined;
  if (wait) {
    const ms = Number(wait);
    if (Number.isSafeInteger(ms) && ms >= 0 && ms <= MAX_READ_WAIT_MS) {
      readWaitMs = ms;
    } else {
      problems.push(
        settingProblem(
          "DATABASE_READ_WAIT_MS",
          env.DATABASE_READ_WAIT_MS,
          `not a whole number of milliseconds from 0 to ${MAX_READ_WAIT_MS}`,
          "set DATABASE_READ_WAIT_MS=50 (0: a replica that is behind is never waited for), or unset it for the default",
        ),
      );
    }
  }
  if (problems.length) throw new SettingsRefusal(problems);
  return { readConnectionStrings: urls, readWaitMs };
}

/** Every URL of a comma-separated list with its password masked. */
function maskList(list: string): string {
  return list
    .split(",")
    .map((e) => maskSettingValue("DATABASE_READ_URLS", e.trim()))
    .join(",");
}
