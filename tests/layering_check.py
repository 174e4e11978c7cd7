#!/usr/bin/python3
"""Issue 31 ask 8: the layering, checked. Reads the `layers` block of
docs/architecture.md (the declared order, the module folders, the names the
neutral layers may not use, and the pending exceptions) and every #include in
src/, include/ and modules/, and fails naming FILE:LINE and the rule when

- order:   a file includes a header of a layer that is not below its own
           (peers do not include each other);
- private: a module includes anything but the kit (include/) and its own folder;
- names:   code in a neutral layer (src/core, src/vec, src/train, src/cli) names
           an env or a module: an identifier with one of the block's names as a
           word (prover_*, sk_kb_*, MORPHO_*), a string with one as a word
           ("Morpho-v0"), or an include of such a header (comments may);
- entry:   a file includes a header that declares a function an `entry` file (a
           program's main.c) defines: the entry only dispatches, and what the
           commands share sits below them (issue 53 ask 6: every command included
           cli.h, which declared main.c's helpers, and main.c called every command);
- base:    a `base` file (a layer's helpers, below its other files) includes a
           header of its own layer that is not a base file too;
- drift:   a folder of src/ or modules/ is in no layer, a declared folder or an
           entry or base file is gone, or an `allow` line matches nothing (a stale
           exception).

Usage: layering_check.py [--root DIR] (default: the repository this file is in).
"""
import os
import re
import sys

BLOCK = re.compile(r"```layers\n(.*?)```", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STRING = re.compile(r'"((?:\\.|[^"\\])*)"')
# a function defined at file scope and not static: "TYPE name(PARAMS) {" from column 0
DEFINITION = re.compile(r"^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)"
                        r"\s*\([^;{}]*\)\s*\{", re.M)


def fail_usage(message):
    print(f"layering_check: {message}", file=sys.stderr)
    sys.exit(2)


class Rules:
    def __init__(self, root, text):
        found = BLOCK.search(text)
        if not found:
            fail_usage("docs/architecture.md has no ```layers block (the declared order)")
        self.layers = []   # (name, folder), longest folder first when matching
        self.rank = {}     # layer -> rank in the order
        self.modules = []  # folders
        self.names = []
        self.neutral = []
        self.allows = []   # [file, rule, what, reason, used]
        self.entries = []  # files nothing may include the declarations of
        self.bases = []    # files that include no other file of their layer
        for number, raw in enumerate(found.group(1).splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if word == "layer":
                name, folder = rest.split()
                self.layers.append((name, folder))
            elif word == "order":
                for rank, group in enumerate(rest.split("<")):
                    for name in group.split():
                        self.rank[name] = rank
            elif word == "module":
                self.modules += rest.split()
            elif word == "names":
                self.names += [n.lower() for n in rest.split()]
            elif word == "neutral":
                self.neutral += rest.split()
            elif word == "entry":
                self.entries += rest.split()
            elif word == "base":
                self.bases += rest.split()
            elif word == "allow":
                parts = rest.split(None, 3)
                if len(parts) < 4:
                    fail_usage(f"layers block line {number}: allow FILE RULE WHAT REASON")
                self.allows.append(parts + [False])
            else:
                fail_usage(f"layers block line {number}: unknown word '{word}'")
        for name, _ in self.layers:
            if name not in self.rank:
                fail_usage(f"layer {name} is not in the order line")
        self.layers.sort(key=lambda layer: -len(layer[1]))
        self.root = root

    def layer_of(self, path):
        for folder in self.modules:
            if path.startswith(folder):
                return "module:" + folder
        for name, folder in self.layers:
            if path.startswith(folder) or path == folder.rstrip("/"):
                return name
        return None

    def allowed(self, path, rule, what):
        for allow in self.allows:
            if allow[0] == path and allow[1] == rule and allow[2] == what:
                allow[4] = True
                return True
        return False


def strip_comments(text):
    """The code with comments blanked (newlines kept, so lines still count)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def resolve(root, path, kind, target):
    """The repository path an include names, or None for a system header."""
    candidates = []
    if kind == '"':
        candidates.append(os.path.join(os.path.dirname(path), target))
    # modules/ too: the modules' own targets search it, and a layer that reached a module's
    # header through it must be seen (not taken for a system header)
    candidates += [os.path.join("include", target), os.path.join("src", target),
                   os.path.join("modules", target)]
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def sources(root):
    for top in ("src", "include", "modules"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def entry_headers(root, rules):
    """{header: (entry file, [names])} for each header of the tree that declares a function
    an entry file defines (not static: what another file could call)."""
    exposed = {}
    for entry in rules.entries:
        try:
            with open(os.path.join(root, entry), errors="replace") as f:
                defined = set(DEFINITION.findall(strip_comments(f.read()))) - {"main"}
        except OSError:
            continue  # reported as drift
        for path in sources(root):
            if not path.endswith(".h") or not defined:
                continue
            with open(os.path.join(root, path), errors="replace") as f:
                code = strip_comments(f.read())
            names = sorted(n for n in defined if re.search(rf"\b{n}\s*\(", code))
            if names:
                exposed[path] = (entry, names)
    return exposed


def check(root):
    with open(os.path.join(root, "docs", "architecture.md")) as f:
        rules = Rules(root, f.read())
    problems = []

    def report(path, line, rule, what, message):
        if not rules.allowed(path, rule, what):
            problems.append(f"{path}:{line}: {rule}: {message}")

    # drift: every folder with sources is declared, every declared folder exists
    declared = [folder for _, folder in rules.layers] + rules.modules
    for folder in declared:
        if not os.path.isdir(os.path.join(root, folder)):
            report(folder, 0, "drift", folder, "declared in docs/architecture.md's layers block, "
                   "but the folder is gone")
    for path in rules.entries + rules.bases:
        if not os.path.isfile(os.path.join(root, path)):
            report(path, 0, "drift", path, "an entry or base file of docs/architecture.md's "
                   "layers block, but the file is gone")
    exposed = entry_headers(root, rules)
    seen = set()
    for path in sources(root):
        folder = os.path.dirname(path) + "/"
        if rules.layer_of(path) is None and folder not in seen:
            seen.add(folder)
            report(folder, 0, "drift", folder, "in no layer of docs/architecture.md's layers "
                   "block (add a layer or module line)")
    if os.path.isdir(os.path.join(root, "modules")):
        for name in sorted(os.listdir(os.path.join(root, "modules"))):
            folder = f"modules/{name}/"
            if os.path.isdir(os.path.join(root, folder)) and folder not in rules.modules:
                report(folder, 0, "drift", folder, "a module folder missing from the block's "
                       "module line")

    for path in sources(root):
        layer = rules.layer_of(path)
        if layer is None:
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        code = strip_comments(text)
        for number, line in enumerate(code.splitlines(), start=1):
            found = INCLUDE.match(line)
            if not found:
                continue
            kind, target = found.groups()
            header = resolve(root, path, kind, target)
            if header is None:
                continue  # a system or third-party header
            to = rules.layer_of(header)
            if header in exposed and path != exposed[header][0]:
                entry, names = exposed[header]
                report(path, number, "entry", target,
                       f"includes {header}, which declares {', '.join(names)}, defined in "
                       f"{entry} (an entry: it only dispatches; what its commands share "
                       "belongs in a file below them)")
            if path in rules.bases and to == layer and header not in rules.bases:
                report(path, number, "base", target,
                       f"includes {header}: a base file of {layer} (its helpers, below the "
                       "layer's other files) includes no other file of its layer")
            if layer.startswith("module:"):
                own = layer[len("module:"):]
                if to != "kit" and not header.startswith(own):
                    report(path, number, "private", target,
                           f"a module includes {header}, which is not the kit's (include/) nor "
                           "its own: a module compiles against include/skinner/*.h only")
                continue
            if to is None or to.startswith("module:"):
                report(path, number, "order", target, f"includes {header}, a module's header: "
                       "the modules sit above the kit, and nothing below includes them")
                continue
            if to != layer and rules.rank[to] >= rules.rank[layer]:
                report(path, number, "order", target,
                       f"{layer} includes {header} ({to}), which is not below it in the "
                       "declared order")
        if layer not in rules.neutral:
            continue
        for number, line in enumerate(code.splitlines(), start=1):
            found = INCLUDE.match(line)
            if found:
                if any(n in re.split(r"[/._]", found.group(2).lower()) for n in rules.names):
                    report(path, number, "names", found.group(2),
                           f"{layer} includes {found.group(2)}, an env's or module's header")
                continue
            strings = STRING.findall(line)
            words = [(w, w.split("_")) for w in IDENTIFIER.findall(STRING.sub(" ", line))]
            words += [(f'"{text}"', re.split(r"[^A-Za-z0-9]+", text)) for text in strings]
            for word, parts in words:
                hit = next((p.lower() for p in parts if p.lower() in rules.names), None)
                if hit:
                    report(path, number, "names", word,
                           f"{layer} names {word} ({hit}: an env or a module); the neutral "
                           "layers reach envs through skinner/env.h's tables only")
    for allow in rules.allows:
        if not allow[4]:
            problems.append(f"docs/architecture.md: drift: 'allow {allow[0]} {allow[1]} "
                            f"{allow[2]}' matches nothing: remove the stale exception")
    return problems, rules


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        root = sys.argv[2]
    elif len(sys.argv) != 1:
        fail_usage("usage: layering_check.py [--root DIR]")
    problems, rules = check(root)
    for problem in problems:
        print(problem)
    pending = len(rules.allows)
    if problems:
        print(f"FAIL: {len(problems)} layering problem(s) (docs/architecture.md, the layers block)")
        return 1
    print(f"ok: every #include and name follows docs/architecture.md's layers "
          f"({pending} pending exception(s) listed there)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
