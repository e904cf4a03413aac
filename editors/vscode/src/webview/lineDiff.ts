// A line diff for showing an agent's change inline (the full view is VS Code's diff editor).
// Common head and tail are trimmed, the middle is diffed by LCS when small enough, else shown
// as removed-then-added. Unchanged lines far from a change collapse to a "⋯ N lines" marker.

export type DiffLine =
  | { op: " " | "-" | "+"; text: string }
  | { op: "…"; count: number };

const LCS_CELL_LIMIT = 400_000;

function splitLines(text: string): string[] {
  if (text === "") {
    return [];
  }
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  if (lines[lines.length - 1] === "") {
    lines.pop();
  }
  return lines;
}

function diffMiddle(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > LCS_CELL_LIMIT) {
    return [...a.map((text) => ({ op: "-" as const, text })), ...b.map((text) => ({ op: "+" as const, text }))];
  }
  // lengths[i][j]: LCS length of a[i..] and b[j..], as one flat array.
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] as number) + 1
          : Math.max(lengths[(i + 1) * width + j] as number, lengths[i * width + j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i] as string });
      i++;
      j++;
    } else if ((lengths[(i + 1) * width + j] as number) >= (lengths[i * width + j + 1] as number)) {
      out.push({ op: "-", text: a[i] as string });
      i++;
    } else {
      out.push({ op: "+", text: b[j] as string });
      j++;
    }
  }
  for (; i < a.length; i++) {
    out.push({ op: "-", text: a[i] as string });
  }
  for (; j < b.length; j++) {
    out.push({ op: "+", text: b[j] as string });
  }
  return out;
}

/** The diff of two texts (`oldText` null: a new file), with `context` lines around changes. */
export function lineDiff(oldText: string | null, newText: string, context = 2): DiffLine[] {
  const a = splitLines(oldText ?? "");
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const full: DiffLine[] = [
    ...a.slice(0, head).map((text) => ({ op: " " as const, text })),
    ...diffMiddle(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((text) => ({ op: " " as const, text })),
  ];
  return collapse(full, context);
}

function collapse(lines: DiffLine[], context: number): DiffLine[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, index) => {
    if (line.op === "-" || line.op === "+") {
      for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) {
        keep[k] = true;
      }
    }
  });
  const out: DiffLine[] = [];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (keep[index]) {
      if (skipped > 0) {
        out.push({ op: "…", count: skipped });
        skipped = 0;
      }
      out.push(line);
    } else {
      skipped++;
    }
  });
  if (skipped > 0) {
    out.push({ op: "…", count: skipped });
  }
  return out;
}

/** Added and removed line counts of a diff. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.op === "+") {
      added++;
    } else if (line.op === "-") {
      removed++;
    }
  }
  return { added, removed };
}
