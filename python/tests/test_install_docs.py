"""docs/install.md's lists of what `make` and `make test` install, against their sources:
the Debian packages of scripts/setup.sh (plain, and what --test adds) and the peers pinned in
python/requirements-test.txt. The doc writes these lists a second time for readers; this test
is what keeps the two copies one."""

import re

from conftest import REPO

PACKAGE_LIST = re.compile(r"packages\+?=\(([^)]*)\)")


def setup_packages():
    """scripts/setup.sh's packages: those every run installs, and those --test adds."""
    script = (REPO / "scripts" / "setup.sh").read_text()
    cross = script.index("if [[ ${1:-} == --cross ]]; then")  # the cross build's, not make's
    script = script[:cross] + script[script.index("\nfi\n", cross) + 4:]
    start = script.index("if [[ ${1:-} == --test ]]; then")
    end = script.index("\nfi\n", start)

    def listed(text):
        return {name for group in PACKAGE_LIST.findall(text)
                for line in group.splitlines() for name in line.split("#")[0].split()}

    return listed(script[:start] + script[end:]), listed(script[start:end])


def doc_section(title):
    """The backquoted names in the first column of the table under `### title`."""
    doc = (REPO / "docs" / "install.md").read_text()
    section = doc.split(f"\n### {title}\n", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines()
            if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row)}


def test_debian_packages_match_setup_sh():
    plain, added = setup_packages()
    assert plain and added
    assert doc_section("Debian packages, for every `make`") == plain
    assert doc_section("Added by `make test` (`scripts/setup.sh --test`)") == added


def test_pinned_peers_match_requirements():
    requirements = (REPO / "python" / "requirements-test.txt").read_text()
    peers = requirements.split("# the peers tested against", 1)[1].split("\n#", 1)[0]
    pins = [line.split("#")[0].strip() for line in peers.splitlines()[1:]]
    pins = [pin for pin in pins if pin]
    numpy = next(line for line in requirements.splitlines() if line.startswith("numpy=="))
    doc = (REPO / "docs" / "install.md").read_text()
    section = doc.split("\n### The test venv, from PyPI\n", 1)[1].split("\n### ", 1)[0]
    assert len(pins) >= 6
    for pin in pins:
        assert f"`{pin}`" in section, f"docs/install.md does not name {pin}"
    assert f"`{numpy}`" in section
