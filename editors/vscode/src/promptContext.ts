// What a prompt carries besides its text: the active file as a `resource_link` and a
// selection as quoted text (every ACP agent takes both; embedded `resource` blocks need a
// capability not all agents have). Pure, so it is unit-tested.

import type { PromptContext } from "./model/messages";
import type { ContentBlock } from "./model/types";

export interface EditorContext {
  uri: string;
  /** Path shown to the user (workspace-relative when inside it). */
  label: string;
  languageId: string;
  selection?: { text: string; startLine: number; endLine: number };
}

/** The line shown under the chat input. Lines are 1-based. */
export function describeContext(ctx: EditorContext | undefined): PromptContext {
  if (!ctx) {
    return {};
  }
  const out: PromptContext = { file: ctx.label };
  if (ctx.selection && ctx.selection.text.trim() !== "") {
    const { startLine, endLine } = ctx.selection;
    out.selection = `${ctx.label}:${startLine}${endLine !== startLine ? `-${endLine}` : ""}`;
  }
  return out;
}

function fence(text: string): string {
  let ticks = "```";
  while (text.includes(ticks)) {
    ticks += "`";
  }
  return ticks;
}

/** The prompt's content blocks: the text, the context when asked for, then the attachments. */
export function buildPrompt(
  text: string,
  ctx: EditorContext | undefined,
  include: boolean,
  attachments: readonly ContentBlock[] = [],
): ContentBlock[] {
  const blocks: ContentBlock[] = [{ type: "text", text }];
  if (!include || !ctx) {
    return [...blocks, ...attachments];
  }
  if (ctx.selection && ctx.selection.text.trim() !== "") {
    const { startLine, endLine } = ctx.selection;
    const f = fence(ctx.selection.text);
    blocks.push({
      type: "text",
      text: `\n\nSelected in ${ctx.label} (lines ${startLine}-${endLine}):\n${f}${ctx.languageId}\n${ctx.selection.text}\n${f}`,
    });
  }
  // The active file once, even when it is attached as well.
  if (!attachments.some((b) => b.type === "resource_link" && b.uri === ctx.uri)) {
    const name = ctx.label.split("/").pop() ?? ctx.label;
    blocks.push({ type: "resource_link", uri: ctx.uri, name });
  }
  return [...blocks, ...attachments];
}
