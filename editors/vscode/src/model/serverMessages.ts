// What the server says in window/showMessage that a front end shows in its own way (pure).

export interface DiskConflict {
  /** The file's name, as the server wrote it (its base name). */
  file: string;
  /** The conflicting lines, e.g. "5" or "3-4, 9". */
  lines: string;
}

const CONFLICT = /^acp-lsp: .+? changed (.+?) on disk where you have unsaved edits \(lines ([^)]*)\)/;

/** The server's warning that an agent's change on disk conflicts with unsaved edits
 * (acp_lsp/editor/disk_sync.py), or null for any other message. acp/documentsSynced brings
 * the same news, which the VS Code front end shows with an action. */
export function parseDiskConflict(message: string): DiskConflict | null {
  const match = CONFLICT.exec(message);
  return match && match[1] && match[2] !== undefined ? { file: match[1], lines: match[2] } : null;
}
