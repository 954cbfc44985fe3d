/**
 * The catalog report capability (capability.ts): this object's summary sent
 * to its catalog shard (catalog-report.ts says when), with the instance's
 * meters riding along, and the pause set it answers with handed to the pause
 * gate (jobs/pause-gate.ts). After a commit it kicks the reporter; its alarm
 * share drops old minute counters and, last of the pass, sends what is due.
 *
 * @module
 */
import type { AlarmPass, Capability } from "../jobs/capability";
import type { Changes } from "../jobs/changes";
import { CatalogReporter, type ReporterDeps } from "./catalog-report";
import { pruneMetrics } from "./minute-counters";

export interface ReportDeps extends ReporterDeps {
  /** This object's name; null only for an object never reached by name. */
  home(): string | null;
  /** The pushed types and the types a `waitsFor` names (config). */
  pushTypes: readonly string[];
  waitedOn: readonly string[];
}

export class Report implements Capability {
  readonly name = "report";
  private reporter_: CatalogReporter | null = null;

  constructor(private readonly d: ReportDeps) {}

  /** start: the reporter reads what the last instance left in `meta`, so it is made once storage is migrated. */
  start(): void {
    this.reporter_ = new CatalogReporter(this.d);
  }

  /** Whether the reporter is made (start): a write before it has no mark to keep. */
  get started(): boolean {
    return this.reporter_ !== null;
  }

  get reporter(): CatalogReporter {
    if (this.reporter_ === null) throw new Error("the scope object has not started");
    return this.reporter_;
  }

  follow(c: Changes): void {
    if (c.report) this.reporter.kick(c.report);
  }

  nextWake(): number | null {
    return this.reporter.deadline();
  }

  async alarm(pass: AlarmPass): Promise<void> {
    const { reporter, d } = this;
    const { now, cameDue } = pass;
    pruneMetrics(d.sql, now, reporter.unreportedSince());
    if (d.home() === null) {
      // Never reached by name (the name is kept at the first named call): nothing to tell and no name to tell it under.
      reporter.forget();
      return;
    }
    try {
      // A pulled or awaited job that only came due changes no row, yet claims and waiters read the catalog: it forces
      // a report, and so does a fresh instance (nothing sent yet). Anything else keeps the reporter's cadence — a
      // pushed retry's wake-up is not a summary of its own (catalog-report.ts); the re-arm brings the deadline.
      const told = cameDue === null || cameDue.some((t) => !d.pushTypes.includes(t) || d.waitedOn.includes(t));
      const due = reporter.deadline();
      if (reporter.lastSent() === null || told) await reporter.flush(true);
      else if (due !== null && due <= now) await reporter.flush();
    } catch (e) {
      // Not this object's failure: the reporter's own deadline (with its retry delay) brings the alarm back.
      console.error(JSON.stringify({ event: "alarm:report_failed", home: d.home(), error: String(e) }));
    }
  }
}
