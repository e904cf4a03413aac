// Small HTML helpers shared by the chat's renderers.

import { escapeHtml, renderMarkdown } from "./markdown";
import type { PendingPermission } from "../model/messages";
import type { ContentBlock, JsonObject, TerminalState } from "../model/types";

export interface RenderContext {
  cwd: string;
  terminals: Record<string, TerminalState>;
  /** The pending permission prompt for a tool call, if any. */
  permissionFor(toolCallId: string): PendingPermission | undefined;
}

export function icon(name: string, title?: string): string {
  const label = title ? ` title="${escapeHtml(title)}" aria-label="${escapeHtml(title)}"` : ` aria-hidden="true"`;
  return `<span class="codicon codicon-${name}"${label}></span>`;
}

/** A path shown relative to the session's directory when it lies inside it. */
export function displayPath(path: string, cwd: string): string {
  if (cwd && path.startsWith(cwd.endsWith("/") ? cwd : `${cwd}/`)) {
    return path.slice(cwd.length).replace(/^\/+/, "");
  }
  return path;
}

export function attr(value: string): string {
  return escapeHtml(value);
}

export function renderContentBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return renderMarkdown(typeof block.text === "string" ? block.text : "");
    case "resource_link": {
      const name = String(block.name ?? block.uri ?? "resource");
      return `<div class="chip">${icon("file")} ${escapeHtml(name)}</div>`;
    }
    case "resource": {
      const resource = (block.resource ?? {}) as JsonObject;
      const uri = String(resource.uri ?? "resource");
      return `<div class="chip">${icon("file-code")} ${escapeHtml(uri.replace(/^file:\/\//, ""))}</div>`;
    }
    case "image":
      return `<div class="chip">${icon("file-media")} image</div>`;
    case "audio":
      return `<div class="chip">${icon("unmute")} audio</div>`;
    default:
      return `<div class="chip unknown">${icon("question")} ${escapeHtml(block.type)}</div>`;
  }
}
