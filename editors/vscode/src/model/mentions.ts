// `@` mentions in the chat input: where one is being typed, and what it may complete to
// (workspace files and folders, plus the diagnostics / symbol / image actions). Pure: the
// webview finds the query, the host ranks its file list; both are unit-tested.

export type MentionKind = "file" | "folder" | "diagnostics" | "symbol" | "image";

export interface MentionItem {
  kind: MentionKind;
  /** Workspace-relative path (folders end with `/`), or the action's word. */
  label: string;
  detail?: string;
}

/** The `@query` the caret is in (start = index of `@`), or undefined. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!match) {
    return undefined;
  }
  const query = match[2] ?? "";
  return { start: caret - query.length - 1, query };
}

/** The input after choosing `item` for the mention at `start`: `@label ` in its place. */
export function applyMention(text: string, start: number, caret: number, item: MentionItem): { text: string; caret: number } {
  const insert = item.kind === "file" || item.kind === "folder" ? `@${item.label} ` : "";
  // An action leaves no text behind: it only adds a chip.
  const rest = insert ? text.slice(caret).replace(/^\s+/, "") : text.slice(caret);
  return { text: text.slice(0, start) + insert + rest, caret: start + insert.length };
}

export const ACTIONS: MentionItem[] = [
  { kind: "diagnostics", label: "diagnostics", detail: "problems of the active file" },
  { kind: "symbol", label: "symbol", detail: "pick a symbol of the active file (no file open: of the workspace)" },
  { kind: "image", label: "image", detail: "pick an image file" },
];

/** Files and every folder above them (workspace-relative, `/`-separated). */
export function workspaceEntries(files: readonly string[]): MentionItem[] {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split("/");
    for (let i = 1; i < parts.length; i++) {
      folders.add(`${parts.slice(0, i).join("/")}/`);
    }
  }
  return [
    ...[...folders].sort().map((label): MentionItem => ({ kind: "folder", label })),
    ...[...files].sort().map((label): MentionItem => ({ kind: "file", label })),
  ];
}

function score(label: string, query: string): number | undefined {
  const path = label.toLowerCase().replace(/\/$/, "");
  const base = path.split("/").pop() ?? path;
  if (query === "") {
    return path.split("/").length; // shallow entries first
  }
  if (base.startsWith(query)) {
    return 0;
  }
  if (path.startsWith(query)) {
    return 1;
  }
  if (base.includes(query)) {
    return 2;
  }
  if (path.includes(query)) {
    return 3;
  }
  return undefined;
}

/** The actions and entries matching `query`, best first, at most `limit`. */
export function matchMentions(entries: readonly MentionItem[], query: string, limit = 30): MentionItem[] {
  const q = query.toLowerCase();
  const actions = ACTIONS.filter((a) => a.label.startsWith(q));
  const ranked = entries
    .map((item) => ({ item, s: score(item.label, q) }))
    .filter((x): x is { item: MentionItem; s: number } => x.s !== undefined)
    .sort((a, b) => a.s - b.s || a.item.label.length - b.item.label.length || a.item.label.localeCompare(b.item.label))
    .map((x) => x.item);
  return [...actions, ...ranked].slice(0, limit);
}
