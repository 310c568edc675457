"""Every file a publishable crate's library reads at compile time is in its package.

`cargo package --no-verify` (the `package` step of .ci/run) checks a package's metadata and
its dependencies' versions, not that the package builds: this checks the part of building
from the package that can fail when the workspace builds, the files outside `src/` or left out
by an `include` list. For each publishable crate it reads the library's sources (test modules,
`#[cfg(test)] mod ...` to the end of their file, left out: they are not built from a package),
finds `include_str!`, `include_bytes!` and `sqlx::migrate!` paths, and fails naming each
file the package's list (`cargo package --list`) lacks.

Usage: python3 .ci/package_files.py (from anywhere in the clone).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The publishable crates: package name and directory.
CRATES = {
    "commerce": ROOT,
    "commerce-core": ROOT / "commerce-core",
    "commerce-store-sqlx": ROOT / "commerce-store-sqlx",
    "commerce-axum": ROOT / "commerce-axum",
    "commerce-warp": ROOT / "commerce-warp",
}
INCLUDE = re.compile(r'\binclude_(?:str|bytes)!\(\s*"([^"]+)"\s*\)')
MIGRATE = re.compile(r'\bmigrate!\(\s*"([^"]+)"\s*\)')
TEST_MODULE = re.compile(r"^\s*#\[cfg\(test\)\]\s*\n\s*(?:pub(?:\([^)]*\))?\s+)?mod\s", re.M)


def packaged(name: str) -> set[str]:
    listed = subprocess.run(
        ["cargo", "package", "--list", "--allow-dirty", "--quiet", "-p", name],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return {line.strip() for line in listed.splitlines() if line.strip()}


def library_code(path: Path) -> str:
    code = path.read_text(encoding="utf-8")
    test = TEST_MODULE.search(code)
    return code[: test.start()] if test else code


def needed(crate: Path) -> list[tuple[Path, Path]]:
    """(source file, file it reads) for every compile-time read of the library's code."""
    reads = []
    for source in sorted((crate / "src").rglob("*.rs")):
        code = library_code(source)
        for found in INCLUDE.findall(code):
            reads.append((source, (source.parent / found).resolve()))
        for found in MIGRATE.findall(code):
            folder = (crate / found).resolve()
            reads += [(source, f) for f in sorted(folder.rglob("*")) if f.is_file()]
    return reads


def main() -> int:
    missing = []
    for name, crate in CRATES.items():
        files = packaged(name)
        for source, read in needed(crate):
            try:
                inside = read.relative_to(crate).as_posix()
            except ValueError:
                inside = None
            if inside is None or inside not in files:
                missing.append(f"{source.relative_to(ROOT)} reads {read.relative_to(ROOT)}, "
                               f"which the package of {name} does not hold")
    for line in missing:
        print(f"error: {line}", file=sys.stderr)
    if not missing:
        print(f"every file the libraries of {len(CRATES)} crates read at compile time is packaged")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
