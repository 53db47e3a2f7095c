"""The compiled check's walk over ``getdents64``'s buffer (``_folderparts.c``,
``list_folder``) fed records no kernel writes: a record cut short at the buffer's end, a
name without its NUL, a length of 0 or past what was returned. Each must answer "not
verified" (-1, ``EIO``) without reading past its record. The C file is built into a small
program whose ``syscall`` hands over the planted buffer (under AddressSanitizer where gcc
has it: a read past the buffer aborts). Skipped without gcc or Python's headers (the
compiled check is then not built either)."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import turnback.snapshot

SOURCE = Path(turnback.snapshot.__file__).parent / "_folderparts.c"

_HARNESS = r"""
#include <stdarg.h>
#include <stddef.h>
static unsigned char planted[32768];
static long planted_len, calls;
static long fake_syscall(long nr, ...) {
    va_list ap;
    va_start(ap, nr);
    (void)va_arg(ap, int);
    void *buf = va_arg(ap, void *);
    va_end(ap);
    if (calls++) return 0;
    __builtin_memcpy(buf, planted, (size_t)planted_len);
    return planted_len;
}
#define syscall fake_syscall
#include SOURCE
#include <stdio.h>
static void record(long at, unsigned short reclen, const char *name, size_t n) {
    struct kernel_dirent64 *d = (struct kernel_dirent64 *)(planted + at);
    d->d_reclen = reclen;
    memcpy(d->d_name, name, n);
}
int main(int argc, char **argv) {
    (void)argc;
    memset(planted, 'A', sizeof planted);  /* no NUL but those planted */
    switch (argv[1][0]) {
    case 'g':  /* good: two kernel-like records */
        planted_len = 48; record(0, 24, "a", 2); record(24, 24, "bc", 3); break;
    case 'n':  /* a name with no NUL inside its record */
        planted_len = 48; record(0, 24, "abcde", 5); record(24, 24, "x", 2); break;
    case 'c':  /* a record cut short at the buffer's very end */
        planted_len = 32768; record(0, 32768 - 8, "a", 2); break;
    case 'z':  /* a length of 0 */
        planted_len = 24; record(0, 0, "a", 2); break;
    case 'p':  /* a length past what was returned */
        planted_len = 24; record(0, 32, "a", 2); break;
    case 's':  /* a length shorter than the header */
        planted_len = 24; record(0, 8, "a", 2); break;
    }
    Listing l = {0};
    errno = 0;
    int fd = open("/", O_RDONLY | O_DIRECTORY);  /* for the rewind after; never listed */
    int got = list_folder(fd, &l);
    printf("%d %d", got, got < 0 ? errno : 0);
    for (size_t i = 0; got == 0 && i < l.count; i++) printf(" %s", l.names + l.starts[i]);
    printf("\n");
    listing_free(&l);
    return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if gcc is None or not include or not (Path(include) / "Python.h").exists():
        pytest.skip("no gcc or Python's headers here (the compiled check is not built)")
    folder = tmp_path_factory.mktemp("records")
    (folder / "harness.c").write_text(_HARNESS)
    exe = folder / "harness"
    base = [gcc, "-O1", "-g", f"-DSOURCE=\"{SOURCE}\"", f"-I{include}",
            str(folder / "harness.c"), "-o", str(exe),
            # the module's Python calls are never made here: left unresolved
            "-no-pie", "-Wl,--unresolved-symbols=ignore-all"]
    if subprocess.run([*base, "-fsanitize=address,undefined"],
                      capture_output=True).returncode != 0:
        subprocess.run(base, check=True, capture_output=True)  # no sanitizer libraries
    return exe


def run(harness: Path, case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(harness), case], capture_output=True, text=True, timeout=30,
                          env={"ASAN_OPTIONS": "detect_leaks=0"})


def test_kernel_like_records_are_listed(harness: Path) -> None:
    got = run(harness, "g")
    assert (got.returncode, got.stdout) == (0, "0 0 a bc\n")


@pytest.mark.parametrize("case", ["n", "c", "z", "p", "s"])
def test_a_record_no_kernel_writes_is_not_verified(harness: Path, case: str) -> None:
    got = run(harness, case)
    assert (got.returncode, got.stdout) == (0, "-1 5\n"), got.stderr[-2000:]  # 5: EIO
