"""Counts the `cpuid` instructions one run of a binary executes (#27).

On a virtual machine each `cpuid` traps to the hypervisor (about 6 µs
here), so their number is a fixed cost of every start that neither `perf`
nor callgrind shows. gdb puts a breakpoint on every `cpuid` site of the
binary (found with objdump) and counts the hits, by site.

    python3 bench/cpuid_count.py BINARY [ARGS...]    # run it from the repo to apply in

Needs gdb and objdump. The sites are counted in the binary alone: a
shared library's `cpuid` (the dynamic loader's, in a dynamic binary) is
not seen.
"""

import os
import subprocess
import sys
import tempfile

GDB_SCRIPT = r'''
import collections, gdb
binary, sites = __BINARY__, __SITES__
gdb.execute("set pagination off")
gdb.execute("starti", to_string=True)
# A PIE is loaded at a random base: the entry point says where.
entry = int(gdb.parse_and_eval("$pc"))
static_entry = __ENTRY__
base = entry - static_entry
for site in sites:
    gdb.execute(f"break *{site + base:#x}", to_string=True)
counts = collections.Counter()
while True:
    try:
        gdb.execute("continue", to_string=True)
        pc = int(gdb.parse_and_eval("$pc"))
    except gdb.error:
        break
    counts[pc - base] += 1
print(f"cpuid executed: {sum(counts.values())}")
for site, n in sorted(counts.items()):
    print(f"  {site:#x}  {n}")
'''


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    disassembly = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                                 check=True, capture_output=True, text=True).stdout
    sites = [int(line.split(":")[0], 16) for line in disassembly.splitlines()
             if line.split("\t")[-1].strip() == "cpuid"]
    header = subprocess.run(["readelf", "-h", binary], check=True, capture_output=True, text=True).stdout
    entry = next(int(line.split()[-1], 16) for line in header.splitlines() if "Entry point" in line)
    script = (GDB_SCRIPT.replace("__BINARY__", repr(binary)).replace("__SITES__", repr(sites))
              .replace("__ENTRY__", str(entry)))
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(script)
        f.flush()
        out = subprocess.run(["gdb", "-q", "-batch", "-x", f.name, "--args", binary] + sys.argv[2:],
                             capture_output=True, text=True).stdout
    print(f"{len(sites)} cpuid sites in {binary}")
    print("\n".join(line for line in out.splitlines() if line.startswith(("cpuid", "  0x"))))


if __name__ == "__main__":
    main()
