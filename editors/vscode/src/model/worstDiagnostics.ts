// What a diagnostics answer of acp/editorTool keeps: the session's folders only, and at most
// `limit` items, errors first (then the editor's order), as the bridge caps them. Pure: no
// `vscode` here, so node:test covers it.

/** Whether `fsPath` is one of `folders` or inside one (no folders: anywhere). */
export function insideFolders(fsPath: string, folders: readonly string[] | undefined): boolean {
  if (folders === undefined) {
    return true;
  }
  return folders.some((folder) => {
    const prefix = folder.endsWith("/") ? folder : `${folder}/`;
    return fsPath === folder || fsPath.startsWith(prefix);
  });
}

/** The worst `limit` of `items` in their own order: lowest severity number first (LSP: 1 is
 * an error), the earlier of two equal ones. All of them when there are no more than `limit`. */
export function worstFirst<T>(items: readonly T[], severity: (item: T) => number, limit: number | undefined): T[] {
  if (limit === undefined || items.length <= limit) {
    return [...items];
  }
  const ranked = items.map((item, index) => ({ item, index, rank: severity(item) }));
  ranked.sort((a, b) => a.rank - b.rank || a.index - b.index);
  return ranked
    .slice(0, limit)
    .sort((a, b) => a.index - b.index)
    .map((r) => r.item);
}

/** `limit` and `folders` from the bridge's arguments; anything else is no restriction. */
export function diagnosticsScope(args: Record<string, unknown>): { limit?: number; folders?: string[] } {
  const limit = typeof args.limit === "number" && args.limit >= 1 ? Math.floor(args.limit) : undefined;
  const folders = Array.isArray(args.folders)
    ? args.folders.filter((f): f is string => typeof f === "string")
    : undefined;
  return { limit, folders };
}
