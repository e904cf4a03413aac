import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  addAttachment,
  chips,
  diagnosticsAttachment,
  imageAttachment,
  pathAttachment,
  removeAttachment,
  sendRefusal,
  symbolAttachment,
  type Attachment,
} from "../../model/attachments";
import { applyMention, matchMentions, mentionAt, workspaceEntries } from "../../model/mentions";
import { buildPrompt } from "../../promptContext";
import { popupOnKey, type Popup } from "../../webview/completion";
import { renderChips, renderMentionList } from "../../webview/renderAttachments";

const PNG = Buffer.from("\x89PNG\r\n\x1a\nfake").toString("base64");

describe("the attachment list", () => {
  test("adding with the same label replaces; removing by id leaves the others in order", () => {
    const a = pathAttachment("file:///w/src/a.py", "src/a.py", false);
    const b = pathAttachment("file:///w/src", "src", true);
    const again = pathAttachment("file:///w/src/a.py", "src/a.py", false);
    let list: Attachment[] = [];
    list = addAttachment(list, a);
    list = addAttachment(list, b);
    list = addAttachment(list, again);
    assert.deepEqual(list.map((x) => x.label), ["src/", "src/a.py"]);
    assert.equal(list[1]?.id, again.id);
    assert.deepEqual(removeAttachment(list, b.id).map((x) => x.label), ["src/a.py"]);
    assert.deepEqual(chips(list), [
      { id: b.id, kind: "folder", label: "src/" },
      { id: again.id, kind: "file", label: "src/a.py" },
    ]);
  });

  test("a removed chip is not in the prompt; the others follow the text and the context", () => {
    const file = pathAttachment("file:///w/src/a.py", "src/a.py", false);
    const diags = diagnosticsAttachment("file:///w/src/b.py", "src/b.py", [
      { line: 3, column: 5, severity: "error", message: "undefined name 'x'", source: "pyflakes" },
    ]);
    assert.ok(diags);
    const list = removeAttachment([file, diags], file.id);
    const blocks = buildPrompt("Fix it", undefined, true, list.map((a) => a.block));
    assert.deepEqual(blocks, [
      { type: "text", text: "Fix it" },
      {
        type: "resource",
        resource: {
          uri: "file:///w/src/b.py#diagnostics",
          text: "src/b.py:3:5: error: undefined name 'x' [pyflakes]",
          mimeType: "text/plain",
        },
      },
    ]);
  });

  test("an attached active file is linked once", () => {
    const editor = { uri: "file:///w/src/a.py", label: "src/a.py", languageId: "python" };
    const file = pathAttachment(editor.uri, "src/a.py", false);
    const blocks = buildPrompt("x", editor, true, [file.block]);
    assert.equal(blocks.filter((b) => b.type === "resource_link").length, 1);
    assert.equal(buildPrompt("x", editor, false, [file.block]).length, 2);
  });
});

describe("attachment blocks", () => {
  test("files are resource links; folders say inode/directory", () => {
    assert.deepEqual(pathAttachment("file:///w/src/a.py", "src/a.py", false).block, {
      type: "resource_link",
      uri: "file:///w/src/a.py",
      name: "a.py",
    });
    const folder = pathAttachment("file:///w/src", "src/", true);
    assert.equal(folder.label, "src/");
    assert.deepEqual(folder.block, { type: "resource_link", uri: "file:///w/src", name: "src", mimeType: "inode/directory" });
  });

  test("diagnostics: one line each, counted in the label; none gives nothing", () => {
    const a = diagnosticsAttachment("file:///w/m.py", "m.py", [
      { line: 1, column: 1, severity: "warning", message: "unused import", code: "F401" },
      { line: 9, column: 2, severity: "hint", message: "rename?" },
    ]);
    assert.equal(a?.label, "diagnostics m.py (2)");
    assert.equal(
      (a?.block.resource as { text: string }).text,
      "m.py:1:1: warning: unused import [F401]\nm.py:9:2: hint: rename?",
    );
    assert.equal(diagnosticsAttachment("file:///w/m.py", "m.py", []), undefined);
  });

  test("a symbol carries its text and its range in the uri", () => {
    const s = symbolAttachment({
      uri: "file:///w/app.py",
      label: "app.py",
      name: "greet",
      languageId: "python",
      startLine: 4,
      endLine: 5,
      text: "def greet(name):\n    return name",
    });
    assert.equal(s.label, "symbol greet app.py:4-5");
    assert.deepEqual(s.block, {
      type: "resource",
      resource: { uri: "file:///w/app.py#L4:5", text: "def greet(name):\n    return name", mimeType: "text/x-python" },
    });
  });
});

describe("images", () => {
  test("an agent that takes images gets an ACP image block", () => {
    const result = imageAttachment("vision", { image: true }, { name: "shot.png", mimeType: "image/png", data: PNG });
    assert.ok("attachment" in result);
    assert.deepEqual(result.attachment.block, { type: "image", mimeType: "image/png", data: PNG });
    assert.equal(result.attachment.label, "image shot.png");
  });

  test("an agent without promptCapabilities.image refuses, saying why", () => {
    const result = imageAttachment("demo", { image: false, embeddedContext: true }, { name: "shot.png", mimeType: "image/png", data: PNG });
    assert.deepEqual(result, {
      refused: "cannot attach shot.png: demo does not accept images (its promptCapabilities.image is not set)",
    });
    const unknown = imageAttachment("claude", undefined, { name: "shot.png", mimeType: "image/png", data: PNG });
    assert.ok("refused" in unknown && unknown.refused.includes("start a session with it first"));
  });

  test("only PNG, JPEG, GIF and WebP; the type comes from the name when the mime type is missing", () => {
    const svg = imageAttachment("v", { image: true }, { name: "x.svg", mimeType: "image/svg+xml", data: PNG });
    assert.ok("refused" in svg && svg.refused.includes("not a PNG"));
    const jpg = imageAttachment("v", { image: true }, { name: "x.JPG", mimeType: "", data: PNG });
    assert.ok("attachment" in jpg && jpg.attachment.block.mimeType === "image/jpeg");
  });

  test("sending an image to an agent that does not take it is refused, never dropped", () => {
    const image = imageAttachment("v", { image: true }, { name: "a.png", mimeType: "image/png", data: PNG });
    assert.ok("attachment" in image);
    const reason = sendRefusal("demo", { image: false }, [image.attachment]);
    assert.ok(reason?.includes("demo does not accept images") && reason.includes("image a.png"), reason);
    assert.equal(sendRefusal("v", { image: true }, [image.attachment]), undefined);
    assert.equal(sendRefusal("demo", { image: false }, [pathAttachment("file:///a", "a", false)]), undefined);
  });
});

describe("@ mentions", () => {
  test("the query is the @word at the caret, after a space or at the start", () => {
    assert.deepEqual(mentionAt("@sr", 3), { start: 0, query: "sr" });
    assert.deepEqual(mentionAt("look at @src/ap", 15), { start: 8, query: "src/ap" });
    assert.deepEqual(mentionAt("look @", 6), { start: 5, query: "" });
    assert.equal(mentionAt("mail@example", 12), undefined);
    assert.equal(mentionAt("@src done", 9), undefined);
  });

  test("choosing a path puts @path in the text; an action leaves no text", () => {
    assert.deepEqual(applyMention("see @ap now", 4, 7, { kind: "file", label: "src/app.py" }), {
      text: "see @src/app.py now",
      caret: 16,
    });
    assert.deepEqual(applyMention("fix @diag", 4, 9, { kind: "diagnostics", label: "diagnostics" }), { text: "fix ", caret: 4 });
  });

  test("folders come from the file list; matches rank by name, then path", () => {
    const entries = workspaceEntries(["src/app.py", "src/lib/apply.ts", "docs/app.md", "README.md"]);
    assert.deepEqual(
      entries.filter((e) => e.kind === "folder").map((e) => e.label),
      ["docs/", "src/", "src/lib/"],
    );
    const found = matchMentions(entries, "ap").map((e) => e.label);
    assert.deepEqual(found, ["src/app.py", "docs/app.md", "src/lib/apply.ts"]);
    assert.deepEqual(matchMentions(entries, "lib").map((e) => e.label), ["src/lib/", "src/lib/apply.ts"]);
    assert.deepEqual(matchMentions(entries, "di").map((e) => e.label), ["diagnostics"]);
    assert.deepEqual(matchMentions(entries, "").slice(0, 3).map((e) => e.label), ["diagnostics", "symbol", "image"]);
  });
});

describe("rendering", () => {
  test("each chip has a × naming what it removes; labels are escaped", () => {
    const html = renderChips([{ id: "a1", kind: "file", label: "<b>.py" }]);
    assert.ok(html.includes('data-remove="a1"'));
    assert.ok(html.includes("&lt;b&gt;.py"));
    assert.ok(!html.includes("<b>"));
    assert.equal(renderChips([]), "");
  });

  test("the mention list marks the selected row", () => {
    const html = renderMentionList([{ kind: "folder", label: "src/" }, { kind: "symbol", label: "symbol", detail: "pick" }], 1);
    assert.ok(html.includes('class="completion selected" role="option" data-mention="1"'));
    assert.ok(html.includes("@symbol"));
  });
});

describe("popup keys", () => {
  test("arrows move (wrapping), Tab/Enter choose, Escape closes, Shift+Enter and letters pass", () => {
    const log: string[] = [];
    const popup: Popup = {
      open: true,
      count: 3,
      selected: 0,
      render: () => log.push("render"),
      chooseSelected: () => log.push(`choose ${popup.selected}`),
      close: () => log.push("close"),
    };
    const key = (k: string, shiftKey = false): boolean => popupOnKey(popup, { key: k, shiftKey, preventDefault: () => log.push("prevent") });
    assert.equal(key("ArrowUp"), true);
    assert.equal(popup.selected, 2);
    assert.equal(key("Enter"), true);
    assert.equal(key("Enter", true), false);
    assert.equal(key("a"), false);
    assert.equal(key("Escape"), true);
    assert.deepEqual(log, ["render", "prevent", "choose 2", "prevent", "close", "prevent"]);
    assert.equal(popupOnKey({ ...popup, open: false }, { key: "Enter", shiftKey: false, preventDefault: () => undefined }), false);
  });
});
