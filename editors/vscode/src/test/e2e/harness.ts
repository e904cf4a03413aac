// A minimal test runner for VS Code's extension-test harness (no mocha needed): tests run in
// order inside the real extension host; results go to a JSON file that pytest reads
// (ACP_LSP_TEST_RESULTS), rewritten after every test so a hang still shows where it was.

import * as fs from "node:fs";

export interface TestResult {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
}

interface TestCase {
  name: string;
  fn: () => Promise<void>;
  timeoutMs: number;
}

const cases: TestCase[] = [];

export function test(name: string, fn: () => Promise<void>, timeoutMs = 30_000): void {
  cases.push({ name, fn, timeoutMs });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function runAll(resultsPath: string | undefined, grep: string | undefined): Promise<TestResult[]> {
  const results: TestResult[] = [];
  const write = (): void => {
    if (resultsPath) {
      fs.writeFileSync(resultsPath, JSON.stringify(results, null, 2));
    }
  };
  for (const c of cases) {
    if (grep && !c.name.includes(grep)) {
      continue;
    }
    const start = Date.now();
    try {
      await withTimeout(c.fn(), c.timeoutMs, c.name);
      results.push({ name: c.name, ok: true, ms: Date.now() - start });
    } catch (error) {
      const message = error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : String(error);
      results.push({ name: c.name, ok: false, ms: Date.now() - start, error: message });
    }
    write();
  }
  write();
  return results;
}

/** Poll `fn` until it returns a truthy value; fail naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) {
        return value as NonNullable<T>;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${timeoutMs} ms for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new Error(`assertion failed: ${message}`);
  }
}

export function assertEqual<T>(actual: T, expected: T, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) {
    throw new Error(`${what}: expected ${e}, got ${a}`);
  }
}
