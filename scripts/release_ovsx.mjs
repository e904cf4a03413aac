// Check a .vsix for Open VSX without publishing. `ovsx` (npm, 1.1.1) has no dry run: `ovsx
// publish` packages and then uploads. So this script runs the checks ovsx itself makes before an
// upload, with ovsx's own functions (read the manifest from the .vsix, validateManifest,
// isLicenseOk), and adds the manifest fields the registry needs: publisher and name as
// identifiers, a semver version, engines.vscode, a license, the vsixmanifest's identity.
// A missing repository is a warning (the registry accepts it; its page then has no source link).
// Usage: node scripts/release_ovsx.mjs OVSX_DIR FILE.vsix   (OVSX_DIR holds node_modules/ovsx)
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [ovsxDir, vsix] = process.argv.slice(2);
const require = createRequire(resolve(ovsxDir, "node_modules", "ovsx", "package.json"));
const { readVSIXPackage } = require("./lib/zip");
const { validateManifest } = require("./lib/util");
const { isLicenseOk } = require("./lib/check-license");
const yauzl = require("yauzl-promise");

const problems = [];
const identifier = /^[a-z0-9][a-z0-9-]*$/i;
const semver = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

const manifest = await readVSIXPackage(vsix);
try {
  validateManifest(manifest);
} catch (err) {
  problems.push(`ovsx: ${err.message}`);
}
// no LICENSE file is looked for: an empty folder stands for the package root
const empty = mkdtempSync(join(tmpdir(), "ovsx-"));
try {
  if (!(await isLicenseOk(empty, manifest))) problems.push("ovsx: no license");
} finally {
  rmSync(empty, { recursive: true, force: true });
}
for (const field of ["publisher", "name"]) {
  if (!identifier.test(manifest[field] ?? "")) problems.push(`${field} '${manifest[field]}' is not an identifier`);
}
if (!semver.test(manifest.version ?? "")) problems.push(`version '${manifest.version}' is not semver`);
if (!manifest.engines?.vscode) problems.push("engines.vscode is missing");
for (const field of ["displayName", "description"]) {
  if (!manifest[field]) problems.push(`${field} is missing`);
}

// The registry reads the extension's identity from extension.vsixmanifest.
const zip = await yauzl.open(vsix);
let vsixmanifest = "";
try {
  for await (const entry of zip) {
    if (entry.filename === "extension.vsixmanifest") {
      const chunks = [];
      for await (const chunk of await entry.openReadStream()) chunks.push(chunk);
      vsixmanifest = Buffer.concat(chunks).toString("utf8");
    }
  }
} finally {
  await zip.close();
}
const identity = /<Identity[^>]*Id="([^"]+)"[^>]*Version="([^"]+)"[^>]*Publisher="([^"]+)"/.exec(vsixmanifest);
if (!identity) {
  problems.push("extension.vsixmanifest has no Identity");
} else if (identity[1] !== manifest.name || identity[2] !== manifest.version || identity[3] !== manifest.publisher) {
  problems.push(`extension.vsixmanifest names ${identity[3]}.${identity[1]} ${identity[2]}`);
}

const id = `${manifest.publisher}.${manifest.name} ${manifest.version}`;
if (!manifest.repository) process.stderr.write(`warning: ${id} has no repository field\n`);
if (problems.length) {
  process.stderr.write(`Open VSX would refuse ${id}:\n  ${problems.join("\n  ")}\n`);
  process.exit(1);
}
process.stdout.write(`Open VSX: ${id} passes ovsx's checks (license ${manifest.license}, engines.vscode ${manifest.engines.vscode})\n`);
