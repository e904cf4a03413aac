import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { noticeOf, statusAttention } from "../../model/attention";

describe("what asks for the user's attention", () => {
  const status = (s: string, extra: object = {}) => ({ sessionId: "s", status: s, ...extra }) as never;

  test("a permission question, once", () => {
    assert.equal(statusAttention("Fix it (demo)", "running", status("awaiting_permission")), "Fix it (demo) waits for your answer to a permission question.");
    assert.equal(statusAttention("Fix it (demo)", "awaiting_permission", status("awaiting_permission")), null);
  });

  test("a turn that ended or failed, not one the user cancelled or a session just opened", () => {
    assert.equal(statusAttention("A", "running", status("idle", { stopReason: "end_turn" })), "A: the turn ended.");
    assert.equal(statusAttention("A", "running", status("idle", { error: { code: -32007, message: "rate limited" } })), "A: the turn failed: rate limited");
    assert.equal(statusAttention("A", "awaiting_permission", status("failed")), "A: the agent stopped.");
    assert.equal(statusAttention("A", "cancelling", status("idle", { stopReason: "cancelled" })), null);
    assert.equal(statusAttention("A", undefined, status("idle")), null);
    assert.equal(statusAttention("A", "idle", status("idle")), null);
  });

  test("ACP notices, with their severity", () => {
    assert.deepEqual(noticeOf({ sessionUpdate: "notice", severity: "warning", title: "Rate limited", description: "retrying" }), {
      severity: "warning",
      text: "Rate limited — retrying",
    });
    assert.deepEqual(noticeOf({ sessionUpdate: "notice", severity: "odd", title: "Compacted" }), { severity: "info", text: "Compacted" });
    assert.equal(noticeOf({ sessionUpdate: "notice" }), null);
    assert.equal(noticeOf({ sessionUpdate: "plan", title: "x" }), null);
  });
});
