/**
 * One sender's rounds, for what a scope object sends after a commit and again from its alarm — the outbox
 * (outbox.ts) and completion callbacks (callbacks.ts): one send at a time per instance, so a row is never sent twice
 * by it; a kick during a send asks for one more round, and a kick that came while the alarm was being set starts
 * one at once. A round's `fresh` says it was asked for by a commit: it may take rows still within their grace.
 * Each sender is a subclass that says what one round sends.
 *
 * @module
 */
export interface RoundsDeps {
  keepAlive(p: Promise<unknown>): void;
  /** Set the alarm anew: rows were sent or left for later. */
  rearm(): Promise<void>;
  /** The log line's event when a round fails. */
  failure: string;
}

export abstract class SendRounds {
  /** The send in flight. */
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly rounds: RoundsDeps) {}

  /**
   * One page of a round: what is due (`fresh`: also what a commit just owed), sent — `empty` when nothing was,
   * `more` when a whole page went and more may follow, `last` when this round stops here (the alarm takes the rest).
   */
  protected abstract page(fresh: boolean): Promise<"empty" | "more" | "last">;

  /** round: page after page until one says stop; true when it found anything. */
  private async round(fresh: boolean): Promise<boolean> {
    for (let found = false; ; found = true) {
      const page = await this.page(fresh);
      if (page === "empty") return found;
      if (page === "last") return true;
    }
  }

  /** kick: send what a write just owed, now, without the caller waiting. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.rounds.keepAlive(this.run(true));
  }

  /** flushDue: the alarm's pass — every row whose time came, awaited. */
  async flushDue(): Promise<void> {
    while (this.running) await this.running;
    await this.run(false);
  }

  private run(fresh: boolean): Promise<void> {
    // Marked before the first round starts: a delivery to this very object runs its follow-ups (and so kick) synchronously.
    let release!: () => void;
    this.running = new Promise<void>((r) => (release = r));
    return (async () => {
      let touched = false;
      let round = fresh;
      do {
        this.again = false;
        touched = (await this.round(round)) || touched;
        // A kick during the round asked for what was owed since: those rows are within their grace.
        round = true;
      } while (this.again);
      // Rows sent or left for later move the next wake-up: a landed send needs no alarm at its grace's end.
      if (touched) await this.rounds.rearm();
    })()
      .catch((e: unknown) => console.error(JSON.stringify({ event: this.rounds.failure, error: String(e) })))
      .finally(() => {
        this.running = null;
        release();
        // A kick while the alarm was being set: its rows go now, not at the end of their grace.
        if (this.again) this.kick();
      });
  }
}
