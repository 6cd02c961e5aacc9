"""One turn of the scripted demo agent (an offline stand-in, not a model), run in the demo workspace.

Its moves depend only on the workspace and the prompt it is given, so a restarted run replays the same story:
no solver yet -> forward Euler, notes, a premature claim of done; pushed back with the measured error ->
RK4, the failed approach recorded with its numbers, the plan checked, a new claim.
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import time
from pathlib import Path

EULER = '''"""Integrate the two demo ODEs with forward Euler and write out/trajectory.dat."""
import math
from pathlib import Path

def rhs(t, y):
    return [y[0] * (1 - y[0] / 10), -y[1] + math.sin(t) + 2]

def main(dt=0.01, t_end=10.0):
    t, y, rows = 0.0, [0.1, 3.0], []
    for i in range(int(round(t_end / dt)) + 1):
        t = i * dt
        rows.append((t, *y))
        f = rhs(t, y)
        y = [y[k] + dt * f[k] for k in range(2)]
    Path("out").mkdir(exist_ok=True)
    with open("out/trajectory.dat", "w") as fh:
        fh.write("# 1:t 2:logistic 3:forced\\n")
        fh.writelines(f"{r[0]:.6f} {r[1]:.15e} {r[2]:.15e}\\n" for r in rows)

if __name__ == "__main__":
    main()
'''

RK4 = EULER.replace("forward Euler", "classical RK4").replace(
    "        f = rhs(t, y)\n        y = [y[k] + dt * f[k] for k in range(2)]\n",
    "        k1 = rhs(t, y)\n"
    "        k2 = rhs(t + dt / 2, [y[k] + dt / 2 * k1[k] for k in range(2)])\n"
    "        k3 = rhs(t + dt / 2, [y[k] + dt / 2 * k2[k] for k in range(2)])\n"
    "        k4 = rhs(t + dt, [y[k] + dt * k3[k] for k in range(2)])\n"
    "        y = [y[k] + dt / 6 * (k1[k] + 2 * k2[k] + 2 * k3[k] + k4[k]) for k in range(2)]\n")


def say(text: str) -> None:
    print(f"[demo agent] {text}", flush=True)
    time.sleep(0.3)  # paced so a person watching the pane can follow


def add_note(entry: str, failed: str | None = None, status: str | None = None) -> None:
    path = Path("CHANGELOG.md")
    text = path.read_text()
    if failed:
        text = text.replace("(none yet: record each approach that did not work, with its numbers)", "").replace(
            "## Failed approaches\n", f"## Failed approaches\n\n- {failed}\n", 1)
    if status:
        text = re.sub(r"## Current status\n\n.*?\n\n", f"## Current status\n\n{status}\n\n", text, count=1, flags=re.S)
    path.write_text(text.rstrip() + f"\n\n### {dt.date.today()}: {entry}\n")


def check_plan(item_prefixes: list[str]) -> None:
    path = Path("CLAUDE.md")
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("- [ ]") and any(p in line for p in item_prefixes):
            lines[i] = line.replace("- [ ]", "- [x]", 1)
    path.write_text("\n".join(lines) + "\n")


def run(*argv: str) -> None:
    subprocess.run(argv, check=False)


def claim(summary: str) -> None:
    say(f"claiming done: {summary}")
    run(sys.executable, "-m", "nightshift.supervisor.cli.main", "claim", "done", "--summary", summary)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file", required=True)
    prompt = Path(parser.parse_args().prompt_file).read_text()
    solver = Path("solver.py")
    say("scripted demo agent (offline stand-in, not a model) starting a turn")
    empty = not solver.exists() or "no solver yet" in solver.read_text()  # the demo workspace's placeholder
    if empty or "does not pass" not in prompt and "forward Euler" in solver.read_text():
        say("reading CLAUDE.md and CHANGELOG.md; plan: integrate both ODEs")
        say("writing solver.py with forward Euler, dt = 0.01 (simple, should be fine)")
        solver.write_text(EULER)
        run(sys.executable, "solver.py")
        check_plan(["Write solver.py"])
        add_note("forward Euler solver, dt = 0.01; output written", status="Euler solver written; looks done.")
        claim("Euler integrator written and produces out/trajectory.dat")
        return 0
    measured = re.findall(r"rel err ([0-9.e+-]+) vs rtol ([0-9.e+-]+)", prompt)
    quoted = ", ".join(f"{err} (tolerance {tol})" for err, tol in measured[:3])
    say(f"push-back received; measured errors quoted: {quoted or 'see the prompt'}")
    if "forward Euler" in solver.read_text():
        say("Euler is first order: its global error ~ dt; the tolerance needs a higher-order method")
        say("rewriting solver.py with classical RK4 (fourth order), same dt")
        solver.write_text(RK4)
        run(sys.executable, "solver.py")
        worst = f"{measured[0][0]} against a tolerance of {measured[0][1]}" if measured else "see the verdict"
        add_note("switched to RK4 after the oracle measured the Euler error",
                 failed=f"forward Euler, dt = 0.01: worst relative error {worst}, far above tolerance",
                 status="RK4 solver; agrees with the reference.")
        check_plan(["Write solver.py", "Agree with the reference", "Record"])
        claim("RK4 integrator agrees with the reference within tolerance")
        return 0
    say("solver already RK4; re-running it and checking the plan")
    run(sys.executable, "solver.py")
    check_plan(["Write solver.py", "Agree with the reference", "Record"])
    add_note("re-ran the RK4 solver")
    claim("RK4 integrator agrees with the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
