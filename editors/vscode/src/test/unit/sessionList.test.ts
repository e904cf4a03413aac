import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { backgroundSessions, backgroundText, sessionLabel, switchEntries } from "../../model/sessionList";
import { fromSnapshot, type ChatSession } from "../../model/sessionModel";
import { statusText } from "../../model/statusText";
import type { SessionStatus } from "../../model/types";

function session(sessionId: string, status: SessionStatus, title: string | null = null, agent = "demo"): ChatSession {
  const s = fromSnapshot({ sessionId, agent, cwd: "/w", status, seq: 0, messages: [], toolCalls: [], timeline: [] });
  s.title = title;
  return s;
}

function running(s: ChatSession, title: string): ChatSession {
  s.toolCalls.t = { toolCallId: "t", title, kind: "read", status: "in_progress", content: [], locations: [] };
  s.timeline.push({ toolCall: "t" });
  return s;
}

describe("session list", () => {
  test("a session is named by its title, else by its short id", () => {
    assert.equal(sessionLabel(session("abcdef123456", "idle", "Fix the parser")), "Fix the parser");
    assert.equal(sessionLabel(session("abcdef123456", "idle")), "Session …123456");
    assert.equal(sessionLabel(session("abcdef123456", "idle", "   ")), "Session …123456");
  });

  test("the switcher lists open sessions, the active first, with agent and state", () => {
    const sessions = [
      session("a", "idle", "Alpha"),
      running(session("b", "running", "Beta", "claude"), "Read src/app.py"),
      session("c", "awaiting_permission", "Gamma"),
      session("d", "closed", "Delta"),
      session("e", "stored", "Epsilon"),
    ];
    assert.deepEqual(switchEntries(sessions, "c"), [
      { sessionId: "c", label: "Gamma", description: "demo · awaiting permission · active" },
      { sessionId: "a", label: "Alpha", description: "demo · idle" },
      { sessionId: "b", label: "Beta", description: "claude · running", detail: "Read src/app.py" },
    ]);
    assert.deepEqual(switchEntries([], null), []);
  });

  test("background sessions are the other busy open ones", () => {
    const sessions = [
      session("a", "running"),
      session("b", "awaiting_permission"),
      session("c", "idle"),
      session("d", "closed"),
      session("e", "cancelling"),
    ];
    assert.deepEqual(
      backgroundSessions(sessions, "a").map((s) => s.sessionId),
      ["b", "e"],
    );
    assert.equal(backgroundText([]), "");
    assert.equal(backgroundText([session("x", "running")]), "1 more running");
    assert.equal(
      backgroundText([session("x", "running"), session("y", "awaiting_permission")]),
      "2 more running, 1 needs permission",
    );
    assert.equal(
      backgroundText([session("x", "awaiting_permission"), session("y", "awaiting_permission")]),
      "2 more running, 2 need permission",
    );
  });
});

describe("status bar with several sessions", () => {
  test("alone, the active session is named by its agent", () => {
    assert.equal(statusText(session("a", "idle", "Alpha"), undefined, []).text, "$(comment-discussion) demo: idle");
  });

  test("with other open sessions it is named by its title; idle others are not counted", () => {
    const { text, tooltip } = statusText(session("a", "idle", "Alpha"), undefined, [session("b", "idle", "Beta")]);
    assert.equal(text, "$(comment-discussion) Alpha (demo): idle");
    assert.doesNotMatch(tooltip, /In the background/);
  });

  test("busy sessions in the background are counted and listed in the tooltip", () => {
    const others = [running(session("b", "running", "Beta"), "Read src/app.py"), session("c", "idle", "Gamma")];
    const { text, tooltip } = statusText(session("a", "idle", "Alpha"), undefined, others);
    assert.equal(text, "$(comment-discussion) Alpha (demo): idle · 1 more running");
    assert.match(tooltip, /In the background:\n• Beta \(demo\): running · Read src\/app\.py/);
    assert.doesNotMatch(tooltip, /Gamma/);
  });

  test("a background session awaiting permission shows the shield", () => {
    const others = [session("b", "awaiting_permission", "Beta"), session("c", "running", "Gamma")];
    const { text, tooltip } = statusText(session("a", "idle", "A rather long session title here"), undefined, others);
    assert.equal(text, "$(comment-discussion) A rather long session t… (demo): idle · $(shield) 2 more running, 1 needs permission");
    assert.match(tooltip, /• Beta \(demo\): awaiting permission/);
    assert.match(tooltip, /• Gamma \(demo\): running/);
  });

  test("with no active session the background still shows", () => {
    assert.equal(statusText(null, undefined, [session("b", "running")]).text, "$(comment-discussion) ACP · 1 more running");
  });
});
