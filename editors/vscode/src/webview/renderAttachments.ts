// HTML of the attachment chips under the chat input and of the `@` mention list. Pure.

import type { AttachmentChip, AttachmentKind } from "../model/attachments";
import type { MentionItem, MentionKind } from "../model/mentions";
import { attr, icon } from "./html";
import { escapeHtml } from "./markdown";

const ICONS: Record<AttachmentKind | MentionKind, string> = {
  file: "file",
  folder: "folder",
  diagnostics: "warning",
  symbol: "symbol-class",
  image: "file-media",
};

/** One chip per attachment, each with a × that removes it ("" when nothing is attached). */
export function renderChips(items: readonly AttachmentChip[]): string {
  return items
    .map(
      (a) =>
        `<span class="chip" data-kind="${attr(a.kind)}" title="${attr(a.label)}">${icon(ICONS[a.kind] ?? "file")}` +
        `<span class="chip-label">${escapeHtml(a.label)}</span>` +
        `<button class="chip-remove" data-remove="${attr(a.id)}" title="Remove from the prompt" aria-label="Remove ${attr(a.label)}">×</button></span>`,
    )
    .join("");
}

export function renderMentionList(items: readonly MentionItem[], selected: number): string {
  return items
    .map(
      (item, index) =>
        `<div class="completion${index === selected ? " selected" : ""}" role="option" data-mention="${index}">` +
        `${icon(ICONS[item.kind] ?? "file")}<span class="cmd">${escapeHtml(item.kind === "file" || item.kind === "folder" ? item.label : `@${item.label}`)}</span>` +
        (item.detail ? `<span class="desc">${escapeHtml(item.detail)}</span>` : "") +
        `</div>`,
    )
    .join("");
}
