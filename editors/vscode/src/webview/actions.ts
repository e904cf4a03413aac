// What a click on the chat's rendered content asks of the host: links to files, and the
// `data-action` buttons of tool calls, permission prompts, commands and the session list.

import type { WebviewToHost } from "../model/messages";

export interface ActionDeps {
  post(message: WebviewToHost): void;
  /** The permission prompts' container (their reason fields). */
  permissions: HTMLElement;
  /** The session list (hidden once one is picked). */
  sessions: HTMLElement;
  complete(command: string): void;
}

/** Handle a click on the document; does nothing for a click on anything else. */
export function onChatClick(event: MouseEvent, deps: ActionDeps): void {
  const { post } = deps;
  const target = event.target as HTMLElement;
  const link = target.closest<HTMLElement>("a[data-link]");
  if (link) {
    event.preventDefault();
    post({ type: "openLocation", path: link.dataset.link ?? "" });
    return;
  }
  const el = target.closest<HTMLElement>("[data-action]");
  if (!el) {
    return;
  }
  const data = el.dataset;
  switch (data.action) {
    case "openDiff":
      post({ type: "openDiff", toolCallId: data.tool ?? "", index: Number(data.index ?? 0) });
      break;
    case "review":
      post({
        type: "review",
        action: data.review === "reject" ? "reject" : "accept",
        toolCallId: data.tool,
        path: data.path,
      });
      break;
    case "permission": {
      const request = data.request ?? "";
      const reasonInput = deps.permissions.querySelector<HTMLInputElement>(`input.reason[data-request="${CSS.escape(request)}"]`);
      const reason = data.kind?.startsWith("reject") ? reasonInput?.value.trim() : undefined;
      el.closest(".permission")?.classList.add("answered");
      post({ type: "permission", requestId: request, optionId: data.option ?? null, reason: reason || undefined });
      break;
    }
    case "openLocation":
      post({ type: "openLocation", path: data.path ?? "", line: data.line !== undefined ? Number(data.line) : null });
      event.preventDefault();
      break;
    case "complete":
      deps.complete(data.command ?? "");
      break;
    case "queued": {
      const action = data.queued === "sendNow" || data.queued === "edit" ? data.queued : "remove";
      post({ type: "queued", action, id: Number(data.id ?? -1) });
      break;
    }
    case "restoreCheckpoint":
    case "editResend":
      post({ type: data.action, messageIndex: Number(data.index ?? -1) });
      break;
    case "switchSession":
      post({ type: "switchSession", sessionId: data.session ?? "" });
      break;
    case "loadSession":
      deps.sessions.hidden = true;
      post({ type: "loadSession", agent: data.agent ?? "", sessionId: data.session ?? "", live: data.live === "true" });
      break;
  }
}
