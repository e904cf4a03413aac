import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { activeSessionTarget, PinnedSession } from "../../chat/target";
import { chatTabTitle } from "../../model/sessionList";
import { fromSnapshot, type ChatSession } from "../../model/sessionModel";
import type { SessionStore } from "../../sessions";

function session(sessionId: string, title: string | null = null): ChatSession {
  const s = fromSnapshot({ sessionId, agent: "demo", cwd: "/w", status: "idle", seq: 0, messages: [], toolCalls: [], timeline: [] });
  s.title = title;
  return s;
}

/** The part of SessionStore the targets use. */
function fakeStore(sessions: ChatSession[]): SessionStore & { forget(id: string): void } {
  const map = new Map(sessions.map((s) => [s.sessionId, s]));
  let active: string | null = sessions[0]?.sessionId ?? null;
  const activations: (string | null)[] = [];
  return {
    get activeId() {
      return active;
    },
    get activeSession() {
      return active === null ? null : (map.get(active) ?? null);
    },
    get: (id: string) => map.get(id),
    setActive: (id: string | null) => {
      active = id;
      activations.push(id);
    },
    forget: (id: string) => map.delete(id),
    activations,
  } as unknown as SessionStore & { forget(id: string): void };
}

describe("which session a chat shows", () => {
  test("the side bar shows the active session, and showing it again does not re-activate it", () => {
    const store = fakeStore([session("a"), session("b")]);
    const target = activeSessionTarget(store);
    assert.equal(target.pinned, false);
    assert.equal(target.session()?.sessionId, "a");
    target.show("a");
    assert.deepEqual((store as unknown as { activations: string[] }).activations, []);
    target.show("b");
    assert.equal(target.sessionId, "b");
    assert.deepEqual((store as unknown as { activations: string[] }).activations, ["b"]);
  });

  test("a pinned chat keeps its session whatever is active, and re-pins on show", () => {
    const store = fakeStore([session("a"), session("b", "Beta")]);
    const shown: string[] = [];
    const target = new PinnedSession(store, "b", (id) => shown.push(id));
    assert.equal(target.pinned, true);
    store.setActive("a");
    assert.equal(target.session()?.sessionId, "b");
    assert.equal(target.open, true);
    target.show("b");
    assert.deepEqual(shown, [], "showing its own session changes nothing");
    target.show("a");
    assert.equal(target.sessionId, "a");
    assert.deepEqual(shown, ["a"]);
  });

  test("a pinned chat whose session the store forgot shows it closed, with its transcript", () => {
    const beta = session("b", "Beta");
    beta.messages.push({ id: "m", role: "agent", parts: [] } as unknown as ChatSession["messages"][number]);
    const store = fakeStore([session("a"), beta]);
    const target = new PinnedSession(store, "b");
    store.forget("b");
    const gone = target.session();
    assert.equal(gone?.status, "closed");
    assert.equal(gone?.messages.length, 1);
    assert.equal(beta.status, "idle", "the store's object is not changed");
    assert.equal(target.open, false);
    assert.equal(new PinnedSession(store, "never").session(), null);
  });

  test("a restored tab shows its session's stored copy as stored until the store has it live", () => {
    const store = fakeStore([session("a")]);
    const target = new PinnedSession(store, "b");
    assert.equal(target.session(), null, "before the server answered");
    const stored = session("b", "Beta");
    stored.status = "stored";
    target.remember(stored);
    assert.equal(target.session()?.status, "stored", "stored, not closed: a prompt resumes it");
    assert.equal(target.open, false);
    const live = session("b", "Beta");
    (store as unknown as { get(id: string): ChatSession | undefined }).get = (id) => (id === "b" ? live : undefined);
    assert.equal(target.session(), live, "resumed: the store's live session");
    assert.equal(target.open, true);
  });

  test("a chat tab is titled by its session's name, and says when it is closed", () => {
    assert.equal(chatTabTitle(session("abcdef123456", "Fix the parser"), true), "Fix the parser");
    assert.equal(chatTabTitle(session("abcdef123456"), true), "Session …123456");
    assert.equal(chatTabTitle(session("abcdef123456", "Fix the parser"), false), "Fix the parser (closed)");
    assert.equal(chatTabTitle(null, false), "ACP Chat");
  });
});
