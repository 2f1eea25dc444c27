/** `service-auth jobs list|cancel`: the scheduler's queue from the command line. */
import type { BackendRuntime } from "../runtime.ts";
import { schedulerOn } from "../scheduler/schedule.ts";
import { JOB_STATES, type JobDocument } from "../scheduler/tables.ts";
import { UsageError } from "./run-command.ts";

export const JOBS_USAGE = `  service-auth jobs list [--state pending|running|done|failed|canceled] [--limit N]
                                         (JSON lines, due soonest first)
  service-auth jobs cancel JOB_ID        (a job that has not started)`;

/** Runs `jobs <sub> …`; returns the exit code. */
export async function jobsCommand(
  backend: BackendRuntime,
  sub: string | undefined,
  args: string[],
  out: { stdout(text: string): void; stderr(text: string): void },
): Promise<number> {
  if (sub === "list") {
    const state = option(args, "--state");
    if (state !== undefined && !(JOB_STATES as readonly string[]).includes(state))
      throw new UsageError(`--state must be one of ${JOB_STATES.join(", ")}`);
    const limitText = option(args, "--limit") ?? "100";
    const limit = Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
      throw new UsageError("--limit must be 1 to 10000");
    const jobs = await backend.read(async (db) => {
      const table = db.query("_scheduled_jobs" as never);
      const rows = state
        ? table.withIndex("by_state_runAt" as never, ((q: any) => q.eq("state", state)) as never)
        : table.withIndex("by_state_runAt" as never);
      return (await rows.take(limit)) as unknown as JobDocument[];
    });
    for (const job of jobs.sort((a, b) => a.runAt - b.runAt))
      out.stdout(`${JSON.stringify(describe(job))}\n`);
    return 0;
  }
  if (sub === "cancel") {
    const [id] = args;
    if (!id) throw new UsageError("jobs cancel needs a JOB_ID");
    const scheduler = schedulerOn(
      (fn) => backend.write(fn),
      (path) => backend.lookup(path, undefined, true),
    );
    if (await scheduler.cancel(id)) {
      out.stderr(`canceled ${id}\n`);
      return 0;
    }
    out.stderr(`${id} is not a pending job (it ran, runs, was canceled, or does not exist)\n`);
    return 1;
  }
  throw new UsageError(`unknown command: jobs ${sub ?? ""}`.trim());
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}

const time = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function describe(job: JobDocument) {
  return {
    id: job._id,
    function: job.name,
    kind: job.kind,
    state: job.state,
    runAt: time(job.runAt),
    startedAt: time(job.startedAt),
    finishedAt: time(job.finishedAt),
    error: job.error,
    cron: job.cron,
  };
}
