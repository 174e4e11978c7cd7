"""The fenced blocks of README.md and docs/*.md, and the markers that say who runs them (issue 52
ask 5). Every test that runs a page's blocks reads them here or says so in the page; the
inventory (tests/docs_inventory.py) checks that each block is run or says why not.

A marker is an HTML comment on the last non-blank line before a block's fence:
  <!-- test: skip: REASON -->           not run, by design; REASON says why (it takes 25 min,
                                        bench/X runs it; it needs two hosts; ...)
  <!-- test: output: WHAT -->           an output sample: WHAT prints it; not run
  <!-- test: run by: TEST -->           run by ctest's TEST, whose source reads this page's
  <!-- test: run by: TEST (FILE) -->    blocks itself (FILE: which of its sources does)
  <!-- test: env NAME=VALUE ... -->     run by the page's runner with these variables set
  <!-- test: file NAME -->              written to NAME for the shell blocks after it
The runners that take `--page PAGE` (readme_check, mujoco_docs_check, test_sweep_docs) run every
block of their page that runs_here() accepts; a `run by:` block is another test's to run.
"""
import re
import sys

FENCE = re.compile(r"^( *)```(\w*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*test:\s*(.*?)\s*-->\s*$")
NOT_RUN = ("skip:", "output:", "run by:")  # markers of blocks a page's runner leaves alone
RUNNABLE = ("sh", "bash", "shell", "python")  # what a page's runner runs (and c with `file`)
KINDS = (("skip", ":"), ("output", ":"), ("run by", ":"), ("env", " "), ("file", " "))


class Block:
    def __init__(self, line, lang, text, marker):
        self.line, self.lang, self.text, self.marker = line, lang, text, marker

    def kind(self):
        """The marker's kind: 'skip', 'output', 'run by', 'env', 'file', 'unknown' (a marker
        of none of these), or None (no marker)."""
        marker = self.marker or ""
        for kind, separator in KINDS:
            if marker.startswith(kind + separator):
                return kind
        return "unknown" if marker else None

    def argument(self):
        """What follows the marker's kind: the reason, the test, the variables or the file."""
        kind = self.kind()
        return self.marker[len(kind) + 1:].strip() if kind not in (None, "unknown") else ""


def read_blocks(path):
    """The fenced blocks of a Markdown file, each with its language, first line and marker. A
    block indented in a list item (`  ```sh`) is read without its indent."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent = fence.group(1)
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = MARKER.match(previous)
        end = next((k for k in range(i + 1, len(lines))
                    if lines[k].startswith(indent + "```") and not lines[k].strip("` ")), None)
        if end is None:
            sys.exit(f"doc_blocks: {path}:{i + 1}: a block that never closes")
        body = [line[len(indent):] if line.startswith(indent) else line
                for line in lines[i + 1:end]]
        blocks.append(Block(i + 1, fence.group(2), "\n".join(body) + "\n",
                            marker.group(1) if marker else None))
        i = end + 1
    return blocks, len(lines)


def runs_here(block):
    """Whether a page's runner (a test taking --page) runs this block: not a block marked as
    not run, as output or as another test's."""
    return not (block.marker or "").startswith(NOT_RUN)


def shell_commands(block):
    """The block's commands: its non-blank lines, joining continuations ('\\' at the end)."""
    commands, pending, start = [], "", 0
    for offset, line in enumerate(block.text.split("\n")):
        if not pending:
            start = block.line + 1 + offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append((start, command))
    return commands
