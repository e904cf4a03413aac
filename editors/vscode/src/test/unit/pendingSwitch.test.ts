import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PendingSwitch } from "../../chat/pendingSwitch";

/** A promise the test settles by hand. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: Error): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("PendingSwitch: a prompt waits for the session on its way into the chat", () => {
  test("a prompt sent while a new session starts learns when it is shown", async () => {
    const pending = new PendingSwitch();
    const start = deferred<string>();
    const shown: string[] = [];
    const switched = pending.switchTo(() => start.promise, (id) => shown.push(id));
    const settled = pending.settled().then((ok) => ({ ok, shown: [...shown] }));
    start.resolve("new");
    assert.equal(await switched, "new");
    assert.deepEqual(await settled, { ok: true, shown: ["new"] }, "shown before the prompt goes on");
    assert.equal(await pending.settled(), true, "nothing under way");
  });

  test("a failed switch tells the prompt, and shows nothing", async () => {
    const pending = new PendingSwitch();
    const start = deferred<string>();
    const shown: string[] = [];
    const switched = pending.switchTo(() => start.promise, (id) => shown.push(id));
    const settled = pending.settled();
    start.reject(new Error("the agent did not start"));
    await assert.rejects(switched, /did not start/);
    assert.equal(await settled, false);
    assert.deepEqual(shown, []);
  });

  test("of two switches under way, the later one is shown, whichever answers last", async () => {
    const pending = new PendingSwitch();
    const first = deferred<string>();
    const second = deferred<string>();
    const shown: string[] = [];
    const a = pending.switchTo(() => first.promise, (id) => shown.push(id));
    const b = pending.switchTo(() => second.promise, (id) => shown.push(id));
    second.resolve("second");
    await b;
    first.resolve("first");
    await a;
    assert.deepEqual(shown, ["second"]);
  });
});
