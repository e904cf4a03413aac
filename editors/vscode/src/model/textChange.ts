// The smallest single replacement between two texts (pure): what a document re-applies after
// it reloaded the disk's text (diskSync.ts), so the edit touches only what differs.

export interface Replacement {
  /** Offsets into the old text (UTF-16 code units, as VS Code's `positionAt` takes them). */
  start: number;
  end: number;
  text: string;
}

/** True for a code unit a cut must not follow: the first half of a surrogate pair or the
 * `\r` of a `\r\n`. */
function joinsNext(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return (code >= 0xd800 && code <= 0xdbff) || (code === 0x0d && text.charCodeAt(index + 1) === 0x0a);
}

/** The one replacement that turns `from` into `to`: the common head and tail are kept, the
 * middle is replaced. null when the texts are equal. A cut never splits a surrogate pair or
 * a `\r\n`. */
export function middleReplacement(from: string, to: string): Replacement | null {
  if (from === to) {
    return null;
  }
  const limit = Math.min(from.length, to.length);
  let head = 0;
  while (head < limit && from.charCodeAt(head) === to.charCodeAt(head)) {
    head++;
  }
  while (head > 0 && joinsNext(from, head - 1)) {
    head--;
  }
  let tail = 0;
  while (
    tail < limit - head &&
    from.charCodeAt(from.length - 1 - tail) === to.charCodeAt(to.length - 1 - tail)
  ) {
    tail++;
  }
  // The tail starts at from.length - tail: the unit before it must not join the next one.
  while (tail > 0 && joinsNext(from, from.length - tail - 1)) {
    tail--;
  }
  return { start: head, end: from.length - tail, text: to.slice(head, to.length - tail) };
}

/** `from` with the replacement applied (what the document holds afterwards). */
export function applyReplacement(from: string, r: Replacement): string {
  return from.slice(0, r.start) + r.text + from.slice(r.end);
}
