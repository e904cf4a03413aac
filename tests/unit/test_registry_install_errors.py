"""What the editor is told when a registry agent's package does not install."""

from __future__ import annotations

from acp_lsp.registry.install import failure_lines

NPM_ETARGET = """npm error code ETARGET
npm error notarget No matching version found for @qwen-code/qwen-code@0.21.14.
npm error notarget In most cases you or one of your dependencies are requesting
npm error notarget a package version that doesn't exist.
npm notice
npm notice New major version of npm available! 10.8.2 -> 11.21.2
npm notice To update run: npm install -g npm@11.21.2
npm notice
npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log
"""


def test_npm_failure_says_why_not_where_its_log_is() -> None:
    lines = failure_lines(NPM_ETARGET)
    assert (
        lines[0] == "npm error notarget No matching version found for @qwen-code/qwen-code@0.21.14."
    )
    assert not any("npm notice" in line or "complete log" in line for line in lines)


def test_output_without_telling_lines_is_kept_as_it_is() -> None:
    assert failure_lines("npm notice a\nnpm notice b\n") == ["npm notice a", "npm notice b"]
    assert failure_lines("pip: no such version\n") == ["pip: no such version"]
