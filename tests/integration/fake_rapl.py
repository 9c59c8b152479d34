#!/usr/bin/env python3
"""A powercap tree whose package counter follows a process's CPU time, for runs without RAPL.

    fake_rapl.py ROOT PIDFILE IDLE_W CORE_W

Writes ROOT/intel-rapl:0/{name,max_energy_range_uj,energy_uj} as the kernel's powercap driver
lays them out, and advances energy_uj about every 2 ms by IDLE_W x elapsed time plus
CORE_W x the CPU time the process in PIDFILE (once it exists) spent since the last update, summed
over its threads from /proc/<pid>/task/*/schedstat (nanoseconds; /proc/<pid>/stat counts ticks of
10 ms, too coarse for a 40 ms reading). A package's power grows with its busy cores much like
this, so a run on fewer cores draws less, which is what the energy phase needs to see. Each value
is written to a temporary file and renamed over energy_uj, so a reader never sees half a number.
Stops when ROOT/stop exists.
"""
import os
import sys
import time

RANGE_UJ = 262143328850  # what Intel packages report as max_energy_range_uj


def cpu_seconds(pid):
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        return None
    return total * 1e-9


def main():
    root, pidfile, idle_w, core_w = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    zone = os.path.join(root, "intel-rapl:0")
    os.makedirs(zone, exist_ok=True)
    for name, text in (("name", "package-0"), ("max_energy_range_uj", str(RANGE_UJ))):
        with open(os.path.join(zone, name), "w") as f:
            f.write(text + "\n")
    energy_uj = 1_000_000.0
    path = os.path.join(zone, "energy_uj")
    tmp = path + ".tmp"
    last = time.monotonic()
    pid, last_cpu = None, None
    while not os.path.exists(os.path.join(root, "stop")):
        now = time.monotonic()
        energy_uj += idle_w * (now - last) * 1e6
        last = now
        if pid is None and os.path.exists(pidfile):
            with open(pidfile) as f:
                text = f.read().strip()
            pid = int(text) if text.isdigit() else None
        cpu = cpu_seconds(pid) if pid is not None else None
        if cpu is not None and last_cpu is not None and cpu >= last_cpu:
            energy_uj += core_w * (cpu - last_cpu) * 1e6
        last_cpu = cpu
        with open(tmp, "w") as f:
            f.write(f"{int(energy_uj) % RANGE_UJ}\n")
        os.replace(tmp, path)
        time.sleep(0.002)


if __name__ == "__main__":
    main()
