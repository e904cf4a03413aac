import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LastUsed } from "../../chat/lastUsed";

describe("LastUsed: the chat the palette's commands act on", () => {
  test("the side bar's chat until another is used", () => {
    const chats = new LastUsed("side bar");
    assert.equal(chats.current, "side bar");
    chats.use("tab A");
    assert.equal(chats.current, "tab A");
    chats.use("tab B");
    assert.equal(chats.current, "tab B");
    chats.use("side bar");
    assert.equal(chats.current, "side bar");
  });

  test("a closed tab that was last used hands back to the side bar; another closed tab changes nothing", () => {
    const chats = new LastUsed("side bar");
    chats.use("tab A");
    chats.forget("tab B");
    assert.equal(chats.current, "tab A");
    chats.forget("tab A");
    assert.equal(chats.current, "side bar");
    chats.forget("side bar");
    assert.equal(chats.current, "side bar");
  });

  test("listeners hear of another chat becoming the last used, not of the same one again", () => {
    const chats = new LastUsed("side bar");
    const heard: string[] = [];
    const sub = chats.onDidChange((chat) => heard.push(chat));
    chats.use("tab A");
    chats.use("tab A");
    chats.forget("tab A");
    sub.dispose();
    chats.use("tab B");
    assert.deepEqual(heard, ["tab A", "side bar"]);
  });
});
