"""Runs one command and reports what its process tree used (bench/side-by-side.ts).

  python peer_rusage.py <report.json> -- <command> [args...]

The command's stdout and stderr pass through. When it exits, <report.json> gets its wall time
from start to exit, its CPU time (user + system, from wait4: the command and every descendant it
waited for, all threads) and its peak RSS (wait4's ru_maxrss: the largest resident set of the
process or of a descendant it waited for). The exit status is the command's.
"""
import json
import os
import subprocess
import sys
import time


def main() -> None:
    report, separator, *command = sys.argv[1:]
    if separator != "--" or not command:
        raise SystemExit("usage: peer_rusage.py <report.json> -- <command> [args...]")
    started = time.perf_counter()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    with open(report, "w") as out:
        json.dump({"wall_ms": wall * 1000, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000, "peak_rss_bytes": usage.ru_maxrss * 1024, "exit": code}, out)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
