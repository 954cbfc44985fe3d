/** The journal's cap counts each position once: an atMostOnce step's start row is replaced by its result, not added to it. */
import { scopeRpc } from "../helpers/scope";
import { describe, expect, it } from "vitest";
import { freshScope, newJob, put } from "../helpers/scope";

describe("journal cap", () => {
  it("a commit over an atMostOnce start counts the step's name once; past the cap it is refused", async () => {
    const { home, stub } = await freshScope();
    await put(stub, [newJob(home, { type: "cap.job" })]);
    const [job] = await scopeRpc(stub).claim({ worker: "w", types: ["cap.job"], limit: 1, leaseMs: 60_000 });
    const token = job!.leaseToken!;
    const start = { at: 1, seed: "00112233445566778899aabbccddeeff" };
    const write = (seq: number, name: string, op: "begin" | "commit", result: string | null) => scopeRpc(stub).appendStep({ id: job!.id, op, seq, name, result, startedAt: 1, start }, token);
    // Eight steps of 2 + 131,000 bytes: 1,048,016 of the 1,048,576 the journal may hold.
    for (let i = 0; i < 8; i++) expect((await write(i, `c${i}`, "commit", JSON.stringify("x".repeat(130_998)))).ok).toBe(true);
    expect((await write(8, "amo", "begin", null)).ok).toBe(true); // +3: the name
    // 3 + 557 bytes fit exactly once the start row's 3 are not counted again.
    expect((await write(8, "amo", "commit", JSON.stringify("y".repeat(555)))).ok).toBe(true);
    const over = await write(9, "z", "commit", "1");
    expect(over).toMatchObject({ ok: false, code: "journal_too_large" });
  });
});
