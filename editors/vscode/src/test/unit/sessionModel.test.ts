import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applySessionUpdate, applyStatus, applyTerminalOutput, fromSnapshot, TERMINAL_CHAR_LIMIT, type ChatSession } from "../../model/sessionModel";
import { messageText, runningToolCall, turnChanges } from "../../model/queries";
import type { SessionSnapshot, SessionUpdate } from "../../model/types";

function snapshot(extra: Partial<SessionSnapshot> = {}): SessionSnapshot {
  return {
    sessionId: "s1",
    agent: "demo",
    cwd: "/w",
    status: "idle",
    seq: 0,
    messages: [],
    toolCalls: [],
    timeline: [],
    ...extra,
  };
}

let seq = 0;
function apply(session: ChatSession, ...updates: SessionUpdate[]): Set<string> | null {
  seq = Math.max(seq, session.seq) + 1;
  return applySessionUpdate(session, { sessionId: session.sessionId, seq, updates });
}

const text = (kind: string, t: string, messageId?: string): SessionUpdate => ({
  sessionUpdate: kind,
  content: { type: "text", text: t },
  ...(messageId ? { messageId } : {}),
});

describe("session model", () => {
  test("notifications not newer than the snapshot are dropped", () => {
    const session = fromSnapshot(snapshot({ seq: 5 }));
    assert.equal(applySessionUpdate(session, { sessionId: "s1", seq: 5, updates: [text("agent_message_chunk", "old")] }), null);
    assert.equal(session.messages.length, 0);
    const changed = applySessionUpdate(session, { sessionId: "s1", seq: 6, updates: [text("agent_message_chunk", "new")] });
    assert.ok(changed?.has("m:0"));
    assert.equal(session.seq, 6);
  });

  test("chunks join into one message until another entry comes between", () => {
    const session = fromSnapshot(snapshot());
    apply(session, text("agent_message_chunk", "Hel"), text("agent_message_chunk", "lo"));
    assert.equal(session.messages.length, 1);
    assert.deepEqual(session.messages[0]?.content, [{ type: "text", text: "Hello" }]);
    apply(session, text("agent_thought_chunk", "hmm"), text("agent_message_chunk", "again"));
    assert.deepEqual(
      session.messages.map((m) => [m.role, messageText(m)]),
      [
        ["agent", "Hello"],
        ["thought", "hmm"],
        ["agent", "again"],
      ],
    );
    assert.deepEqual(session.timeline, [{ message: 0 }, { message: 1 }, { message: 2 }]);
  });

  test("chunks with a messageId go to that message wherever it is", () => {
    const session = fromSnapshot(snapshot());
    apply(session, text("agent_message_chunk", "a", "m1"), text("agent_thought_chunk", "t"), text("agent_message_chunk", "b", "m1"));
    assert.equal(messageText(session.messages[0]!), "ab");
    assert.equal(session.messages.length, 2);
  });

  test("a v2 whole message replaces its content", () => {
    const session = fromSnapshot(snapshot());
    apply(session, text("agent_message_chunk", "draft", "m1"));
    apply(session, { sessionUpdate: "agent_message", messageId: "m1", content: [{ type: "text", text: "final" }] });
    assert.equal(session.messages.length, 1);
    assert.equal(messageText(session.messages[0]!), "final");
  });

  test("tool calls are replaced by their merged state; contentAppend appends", () => {
    const session = fromSnapshot(snapshot());
    const changed = apply(session, {
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: "t1", title: "Run", kind: "execute", status: "in_progress", content: [{ type: "content", content: { type: "text", text: "a" } }], locations: [] },
    });
    assert.ok(changed?.has("timeline") && changed.has("t:t1"));
    apply(session, {
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: "t1", title: "Run", kind: "execute", status: "in_progress", locations: [] },
      contentAppend: [{ type: "content", content: { type: "text", text: "b" } }],
    });
    assert.equal(session.toolCalls.t1?.content.length, 2);
    apply(session, {
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: "t1", title: "Run it", kind: "execute", status: "completed", content: [], locations: [] },
    });
    assert.equal(session.toolCalls.t1?.title, "Run it");
    assert.equal(session.toolCalls.t1?.content.length, 0);
    assert.deepEqual(session.timeline, [{ toolCall: "t1" }]);
  });

  test("unknown kinds, statuses and fields are kept", () => {
    const session = fromSnapshot(snapshot());
    apply(session, {
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: "x", title: "", kind: "_vendor_kind", status: "_queued", content: [], locations: [], _meta: { a: 1 } },
    });
    assert.equal(session.toolCalls.x?.kind, "_vendor_kind");
    assert.equal(session.toolCalls.x?.status, "_queued");
    assert.deepEqual(session.toolCalls.x?._meta, { a: 1 });
    assert.deepEqual(apply(session, { sessionUpdate: "_vendor/whatever", x: 1 }), new Set());
  });

  test("plan, commands, modes, config options, title and usage", () => {
    const session = fromSnapshot(snapshot({ modes: { currentModeId: "code", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] } }));
    apply(
      session,
      { sessionUpdate: "plan", entries: [{ content: "Read", status: "pending", priority: "high" }] },
      { sessionUpdate: "available_commands_update", availableCommands: [{ name: "help" }] },
      { sessionUpdate: "current_mode_update", currentModeId: "ask" },
      { sessionUpdate: "config_option_update", configOptions: [{ id: "v", name: "V", type: "select", currentValue: "a" }] },
      { sessionUpdate: "session_info_update", title: "Hello" },
      { sessionUpdate: "usage_update", used: 10, size: 100 },
    );
    assert.equal(session.plan?.[0]?.content, "Read");
    assert.equal(session.commands[0]?.name, "help");
    assert.equal(session.modes?.currentModeId, "ask");
    assert.equal(session.modes?.availableModes.length, 2);
    assert.equal(session.configOptions[0]?.currentValue, "a");
    assert.equal(session.title, "Hello");
    assert.deepEqual(session.usage, { used: 10, size: 100 });
  });

  test("a snapshot's plan object and timeline are read; the last turn starts at the last user message", () => {
    const session = fromSnapshot(
      snapshot({
        plan: { entries: [{ content: "x" }] },
        messages: [
          { role: "user", content: [{ type: "text", text: "hi" }] },
          { role: "agent", content: [{ type: "text", text: "yo" }] },
          { role: "user", content: [{ type: "text", text: "again" }] },
        ],
        timeline: [{ message: 0 }, { message: 1 }, { message: 2 }],
      }),
    );
    assert.equal(session.plan?.length, 1);
    assert.equal(session.lastTurnStart, 2);
  });

  test("terminal output appends, resets and keeps a bounded tail", () => {
    const session = fromSnapshot(snapshot());
    applyTerminalOutput(session, { sessionId: "s1", terminalId: "a", data: "one\n" });
    applyTerminalOutput(session, { sessionId: "s1", terminalId: "a", data: "two\n" });
    assert.equal(session.terminals.a?.output, "one\ntwo\n");
    applyTerminalOutput(session, { sessionId: "s1", terminalId: "a", data: "fresh", reset: true, exitStatus: { exitCode: 0 } });
    assert.deepEqual(session.terminals.a, { output: "fresh", truncated: false, exitStatus: { exitCode: 0 } });
    applyTerminalOutput(session, { sessionId: "s1", terminalId: "a", data: "x".repeat(TERMINAL_CHAR_LIMIT + 10) });
    assert.equal(session.terminals.a?.output.length, TERMINAL_CHAR_LIMIT);
    assert.equal(session.terminals.a?.truncated, true);
  });

  test("status: running clears the last stop reason; idle carries the new one", () => {
    const session = fromSnapshot(snapshot());
    applyStatus(session, { sessionId: "s1", status: "idle", stopReason: "cancelled" });
    applyStatus(session, { sessionId: "s1", status: "running" });
    assert.equal(session.stopReason, null);
    applyStatus(session, { sessionId: "s1", status: "idle", stopReason: "end_turn" });
    assert.equal(session.stopReason, "end_turn");
  });

  test("the running tool call is the latest unfinished one", () => {
    const session = fromSnapshot(snapshot());
    const call = (id: string, status: string): SessionUpdate => ({
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: id, title: id, kind: "read", status, content: [], locations: [] },
    });
    apply(session, call("a", "completed"), call("b", "in_progress"), call("c", "completed"));
    assert.equal(runningToolCall(session)?.toolCallId, "b");
    apply(session, call("b", "completed"));
    assert.equal(runningToolCall(session), null);
  });

  test("the turn's changed files: review files and reported diffs of the last turn, by path", () => {
    const session = fromSnapshot(snapshot());
    const call = (id: string, extra: Record<string, unknown>): SessionUpdate => ({
      sessionUpdate: "tool_call",
      toolCall: { toolCallId: id, title: id, kind: "edit", status: "completed", content: [], locations: [], ...extra },
    });
    const diff = (path: string, oldText: string | null = "a") => ({ type: "diff", path, oldText, newText: "b" });
    assert.deepEqual(turnChanges(session), []);
    apply(session, text("user_message_chunk", "first"), call("old", { content: [diff("/w/old.py")] }));
    apply(
      session,
      text("user_message_chunk", "second", "u2"),
      // reported only, no review yet
      call("e1", { content: [diff("/w/a.py"), diff("/w/new.py", null)] }),
      // a shell command: seen on disk
      call("sh", {
        kind: "execute",
        review: {
          status: "pending",
          files: [
            { path: "/w/a.py", status: "accepted", change: "modified" },
            { path: "/w/gone.py", status: "failed", change: "deleted", message: "nope" },
            { path: "/w/tmp.py", status: "rejected", change: "created" },
          ],
        },
      }),
      call("e2", { content: [diff("/w/tmp.py")], review: { status: "accepted", files: [{ path: "/w/tmp.py", status: "accepted" }] } }),
      call("e3", { content: [diff("/w/new.py")], review: { status: "accepted", files: [{ path: "/w/new.py", status: "accepted", change: "modified" }] } }),
    );
    assert.deepEqual(turnChanges(session), [
      // pending (e1) + accepted (sh): still open; e1's diff opens
      { path: "/w/a.py", change: "modified", status: "pending", diff: { toolCallId: "e1", index: 0 } },
      // created by e1, then modified: created; the last diff opens
      { path: "/w/new.py", change: "created", status: "pending", diff: { toolCallId: "e3", index: 0 } },
      { path: "/w/gone.py", change: "deleted", status: "failed", message: "nope" },
      // rejected once, accepted once
      { path: "/w/tmp.py", change: "created", status: "mixed", diff: { toolCallId: "e2", index: 0 } },
    ]);
  });
});
