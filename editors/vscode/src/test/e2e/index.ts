// Entry of VS Code's extension-test harness (`extensionTestsPath`): runs the suite in the
// extension host and fails (throws) when any test failed.

import { runAll } from "./harness";
import "./suite";
import "./panels";
import "./diskSync";

export async function run(): Promise<void> {
  const results = await runAll(process.env.ACP_LSP_TEST_RESULTS, process.env.ACP_LSP_TEST_GREP);
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) {
    throw new Error(`${failed.length} of ${results.length} tests failed: ${failed.map((f) => f.name).join("; ")}`);
  }
}
