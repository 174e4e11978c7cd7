#!/usr/bin/python3
"""Every fenced block of README.md and docs/*.md runs in ctest, or says why not (issue 52 ask 5).

Reads each page's blocks (tests/doc_blocks.py) and ctest's tests (`ctest --show-only=json-v1` in
the build folder), and fails naming PAGE:LINE for each block that is none of:
- run by its page's runner: a ctest test whose command is `SCRIPT ... --page PAGE`, SCRIPT being
  one that leaves marked blocks alone (it calls doc_blocks.runs_here); the block is unmarked
  (or `env`/`file`-marked) and in a language the runner runs (sh, python; c with `file NAME`,
  which readme_check writes out);
- marked `<!-- test: run by: TEST -->` (or `run by: TEST (FILE)`), TEST being a ctest test one of
  whose sources (the scripts and folders of its command, tests/PROGRAM.c for a cmocka program,
  or FILE among them) names the page and reads fenced blocks of the block's language
  ("```sh"); a test this build's configuration leaves out is named as not checked;
- marked `<!-- test: skip: REASON -->` or `<!-- test: output: WHAT -->` with a specific reason:
  at least MIN_REASON_WORDS words, and no placeholder (todo, tbd, fixme).

usage: docs_inventory.py --build BUILD --source SOURCE [--ctest CTEST]
       docs_inventory.py --planted --build BUILD --source SOURCE [--ctest CTEST]
--planted checks the checker: a page of planted blocks (unmarked, a test that does not read the
page, a test that does not exist, a TODO and a two-word reason, a test that reads the page's sh
blocks named for a python block; and blocks that pass) must fail exactly where planted.
Exit 0 when every block is accounted for; 1 naming each one that is not (or a bad argument).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_blocks import RUNNABLE, read_blocks  # noqa: E402

MIN_REASON_WORDS = 3
VAGUE = re.compile(r"\b(todo|tbd|fixme|xxx)\b", re.I)
RUN_BY = re.compile(r"^([\w@.+-]+)(?:\s+\(([^)]+)\))?$")


def ctest_tests(ctest, build):
    """{test name: its command (a list)} of the build's ctest."""
    done = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"docs_inventory: `ctest --show-only=json-v1` in {build} exited "
                 f"{done.returncode}:\n{done.stderr}")
    # a program not built yet has no command: it is a skinner_test, tests/NAME.c
    tests = {test["name"]: test.get("command", [os.path.join(build, "tests", test["name"])])
             for test in json.loads(done.stdout)["tests"]}
    if not tests:
        sys.exit(f"docs_inventory: ctest lists no tests in {build}: expected a configured build "
                 "folder (cmake -S . -B build)")
    return tests


def test_sources(command, source, build):
    """The source files of a test's command: the files and folders under SOURCE it names (a
    folder's .py, .sh and .c files), and tests/NAME.c of a program NAME the build made."""
    found = []
    for arg in command:
        path = os.path.realpath(arg) if os.path.isabs(arg) else arg
        if path == build or path.startswith(build + os.sep):  # (the build may be in SOURCE)
            program = os.path.join(source, "tests", os.path.basename(path) + ".c")
            if os.path.isfile(program):
                found.append(program)
        elif path.startswith(source + os.sep) and os.path.isfile(path):
            found.append(path)
        elif path.startswith(source + os.sep) and os.path.isdir(path):
            for ext in ("py", "sh", "c"):
                found += sorted(glob.glob(os.path.join(path, "**", f"*.{ext}"), recursive=True))
    return found


def declared_elsewhere(test, source):
    """Whether tests/CMakeLists.txt declares TEST under a condition this build did not meet."""
    with open(os.path.join(source, "tests", "CMakeLists.txt"), encoding="utf-8") as cmake:
        declared = rf"(add_test\(NAME|skinner_test\() *{re.escape(test)}[\s)]"
        return re.search(declared, cmake.read()) is not None


def reads_page(path, page, lang):
    """Whether a test's source names the page and reads its fenced blocks of this language
    ("```sh", or "sh\\n" after a split on "```"; any fence for an unlabelled block)."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return False
    fences = "```" in text or "read_blocks" in text
    return page in text and fences and (not lang or f"```{lang}" in text or
                                        f'"{lang}\\n"' in text)


def page_runners(tests, source, build):
    """{page: [test names]} of the tests running a whole page through a runner (--page PAGE)."""
    runners = {}
    for name, command in tests.items():
        if "--page" not in command[:-1]:
            continue
        page = command[command.index("--page") + 1]
        scripts = [path for path in test_sources(command, source, build) if path.endswith(".py")]
        if any("runs_here(" in open(path, encoding="utf-8").read() for path in scripts):
            runners.setdefault(page, []).append(name)
    return runners


def check_page(page, path, tests, runners, source, build):
    """(problems, tally) of one page: 'PAGE:LINE: what is wrong' for each block not accounted
    for, and how many blocks of each kind are."""
    problems, tally = [], {}
    blocks, _ = read_blocks(path)
    for block in blocks:
        where, lang = f"{page}:{block.line}", block.lang or "unlabelled"
        kind, argument = block.kind(), block.argument()
        if kind in ("skip", "output"):
            if len(argument.split()) < MIN_REASON_WORDS or VAGUE.search(argument):
                problems.append(f"{where}: the {lang} block's '{kind}:' reason '{argument}' says "
                                f"nothing specific (at least {MIN_REASON_WORDS} words: what it "
                                "shows, or why it cannot run and what runs it instead)")
            else:
                tally[kind] = tally.get(kind, 0) + 1
        elif kind == "run by":
            named = RUN_BY.match(argument)
            test = named.group(1) if named else argument
            if named and test not in tests and declared_elsewhere(test, source):
                # a test this configuration leaves out (python_module in a sanitizer build)
                print(f"{where}: not checked: {test} is declared in tests/CMakeLists.txt but "
                      "not registered in this build")
                tally["run by"] = tally.get("run by", 0) + 1
                continue
            if not named or test not in tests:
                problems.append(f"{where}: 'run by: {argument}' names no ctest test (expected "
                                "'run by: TEST' or 'run by: TEST (FILE)', TEST from `ctest -N`)")
                continue
            sources = test_sources(tests[test], source, build)
            if named.group(2):
                wanted = os.path.join(source, named.group(2))
                sources = [s for s in sources if s == wanted]
                if not sources:
                    problems.append(f"{where}: 'run by: {argument}': {named.group(2)} is not "
                                    f"among {test}'s sources (its command: "
                                    f"{' '.join(tests[test])})")
                    continue
            if not any(reads_page(s, page, block.lang) for s in sources):
                shown = ", ".join(os.path.relpath(s, source) for s in sources) or "none found"
                problems.append(f"{where}: 'run by: {argument}': {test}'s sources ({shown}) do "
                                f"not read {page}'s {lang} blocks (none names {page} and reads "
                                f"```{block.lang})")
                continue
            tally["run by"] = tally.get("run by", 0) + 1
        elif kind == "unknown":
            problems.append(f"{where}: unknown marker '<!-- test: {block.marker} -->' (expected "
                            "skip: REASON, output: WHAT, run by: TEST, env ..., file NAME)")
        elif not runners.get(page):
            article = "an" if lang[0] in "aeiou" else "a"
            problems.append(f"{where}: {article} {lang} block that no ctest test runs and no "
                            f"marker explains: {page} has no runner (a test running `... --page "
                            f"{page}`); "
                            "mark it '<!-- test: run by: TEST -->' or "
                            "'<!-- test: skip: REASON -->' on the line before the fence")
        elif block.lang not in RUNNABLE and not (block.lang == "c" and kind == "file"):
            problems.append(f"{where}: a {lang} block, which {', '.join(runners[page])} does not "
                            "run: mark it '<!-- test: output: WHAT -->' or "
                            "'<!-- test: skip: REASON -->' on the line before the fence")
        elif kind in ("env", "file") and not any(
                f'startswith("{kind} ")' in open(script, encoding="utf-8").read()
                for name in runners[page] for script in test_sources(tests[name], source, build)
                if script.endswith(".py")):
            problems.append(f"{where}: a '{kind}' marker, which {', '.join(runners[page])} does "
                            f"not honour (only readme_check reads '{kind}' markers)")
        else:
            tally["page runner"] = tally.get("page runner", 0) + 1
    return problems, tally


def pages(source):
    return ["README.md"] + sorted(os.path.relpath(p, source)
                                  for p in glob.glob(os.path.join(source, "docs", "*.md")))


PLANTED = """# planted

```sh
skinner envs
```

<!-- test: run by: test_config -->
```sh
skinner check CartPole-v1
```

<!-- test: run by: no_such_test -->
```python
print(1)
```

<!-- test: skip: TODO run it -->
```sh
make everything
```

<!-- test: run by: test_check -->
```sh
skinner check CartPole-v1
```

<!-- test: output: what skinner check CartPole-v1 prints -->
```text
CartPole-v1: 16 passed
```

<!-- test: run by: test_check -->
```python
print("test_check reads this page's sh blocks only")
```

<!-- test: output: a sample -->
```text
ok
```
"""
PLANTED_FAILURES = {3: "no runner", 8: "do not read", 13: "names no ctest test",
                    18: "nothing specific", 33: "python blocks", 38: "nothing specific"}


def planted(tests, runners, source, build):
    """The checker on PLANTED, as if it were docs/check.md: it must fail at each planted line
    with the expected words, and nowhere else."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "check.md")
        with open(path, "w", encoding="utf-8") as out:
            out.write(PLANTED)
        problems, _ = check_page("docs/check.md", path, tests, runners, source, build)
    print("\n".join(problems))
    found = {int(p.split(":")[1]): p for p in problems}
    wrong = [f"line {line}: expected a failure saying '{words}', got: {found.get(line)}"
             for line, words in PLANTED_FAILURES.items() if words not in (found.get(line) or "")]
    wrong += [f"line {line}: a failure where none was planted: {p}"
              for line, p in found.items() if line not in PLANTED_FAILURES]
    if wrong:
        print("docs_inventory --planted: FAIL\n" + "\n".join(wrong))
        return 1
    print(f"docs_inventory --planted: the {len(PLANTED_FAILURES)} planted blocks fail as "
          "expected, the 2 good ones pass")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--ctest", default="ctest")
    parser.add_argument("--planted", action="store_true")
    args = parser.parse_args()
    source, build = os.path.realpath(args.source), os.path.realpath(args.build)
    if not os.path.isfile(os.path.join(source, "README.md")):
        sys.exit(f"docs_inventory: {source} has no README.md: expected the source tree (--source)")
    tests = ctest_tests(args.ctest, build)
    runners = page_runners(tests, source, build)
    if args.planted:
        return planted(tests, runners, source, build)
    problems, total = [], {}
    for page in pages(source):
        page_problems, tally = check_page(page, os.path.join(source, page), tests, runners,
                                          source, build)
        problems += page_problems
        for kind, count in tally.items():
            total[kind] = total.get(kind, 0) + count
        print(f"{page}: " + (", ".join(f"{count} {kind}" for kind, count in sorted(tally.items()))
                             or ("nothing accounted for" if page_problems else "no blocks")) +
              (f"; {len(page_problems)} unaccounted for" if page_problems else ""))
    if problems:
        print("\n".join(["", "docs_inventory: FAIL"] + problems))
        return 1
    print("docs_inventory: every block runs in ctest or says why not: " +
          ", ".join(f"{count} {kind}" for kind, count in sorted(total.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
