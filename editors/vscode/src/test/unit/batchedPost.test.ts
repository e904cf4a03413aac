import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { batchedPost } from "../../chat/batchedPost";
import { fakeClock } from "./fakeClock";
import type { HostToWebview } from "../../model/messages";

const focus = (text: string): HostToWebview => ({ type: "focusInput", text });

describe("batched host → webview messages", () => {
  test("a message goes at once when idle; what follows within the interval goes as one batch, in order", () => {
    const clock = fakeClock();
    const sent: HostToWebview[] = [];
    const post = batchedPost((m) => sent.push(m), 16, clock);
    post(focus("a"));
    assert.deepEqual(sent, [focus("a")]);
    post(focus("b"));
    post(focus("c"));
    assert.equal(sent.length, 1);
    clock.advance(15);
    assert.equal(sent.length, 1);
    clock.advance(1);
    assert.deepEqual(sent, [focus("a"), { type: "batch", messages: [focus("b"), focus("c")] }]);
    // One message alone in its interval is sent as itself.
    post(focus("d"));
    clock.advance(16);
    assert.deepEqual(sent.at(-1), focus("d"));
    // Idle for longer than the interval: at once again.
    clock.advance(100);
    post(focus("e"));
    assert.deepEqual(sent.at(-1), focus("e"));
    assert.equal(sent.length, 4);
  });
});
