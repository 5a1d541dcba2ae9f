#!/usr/bin/env python3
"""Start-up A/B between builds: the time from a daemon's start to its answer to `chats.list`.

    Benchmarks/Tools/startup_ab.py RUNS DAEMON@DATABASE [DAEMON@DATABASE ...]

Each pair starts once first (a warm-up that leaves the clean-stop record, so that the measured
starts skip the quick check), then RUNS rounds start each pair in turn, alternating, and the
median and every run are printed. Give each build a file of its own schema (an older daemon
refuses a newer file; a newer one migrates an older file at its first start, the warm-up).
"""
import statistics
import subprocess
import sys
import time


def start(daemon, database):
    began = time.monotonic()
    process = subprocess.Popen([daemon, '--database', database], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    process.stdin.write(b'{"jsonrpc":"2.0","id":-1,"method":"chats.list","params":{"limit":1}}\n')
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f'{daemon} ended before answering (see its stderr: run it alone)')
        if b'"id":-1' in line:
            break
    answered = time.monotonic() - began
    process.stdin.close()
    process.wait()
    return answered


def main():
    runs = int(sys.argv[1])
    pairs = [argument.split('@', 1) for argument in sys.argv[2:]]
    results = {f'{d}@{b}': [] for d, b in pairs}
    for daemon, database in pairs:
        start(daemon, database)
    for _ in range(runs):
        for daemon, database in pairs:
            results[f'{daemon}@{database}'].append(start(daemon, database))
    for key, values in results.items():
        print(f'{key}: median {statistics.median(values) * 1000:.0f} ms, runs {[round(v * 1000) for v in values]}')


if __name__ == '__main__':
    main()
