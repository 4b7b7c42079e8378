"""Tune simulate.py's PID gains with heuriscale's ask/tell: each point is a run of the program
as a subprocess, spread over worker processes, with a progress bar (evaluations per second),
a checkpoint after every generation, Ctrl-C that ends cleanly and a rerun that continues.

    python optimise.py                           # DE, 1,500 evaluations, 4 workers
    python optimise.py --evals 3000 --workers 8 --checkpoint tuning.ckpt

Ctrl-C (or SIGTERM) lets the generation being evaluated finish, saves, and exits; the same
command again continues from the checkpoint and ends with exactly the result of a run that
was never interrupted. A second Ctrl-C exits at once (the last checkpoint stays intact).
"""

import argparse
import subprocess
import sys
from pathlib import Path

import heuriscale as hs
from heuriscale.interrupt import interruptible

SIMULATION = Path(__file__).with_name("simulate.py")
#: The gains' box: KP, KI, KD.
LOWER, UPPER = [0.0, 0.0, 0.0], [20.0, 10.0, 5.0]


def simulate(gains) -> float:
    """One evaluation: the simulation as a program of its own (in a worker process). Its own
    process session, so that Ctrl-C at the terminal reaches this optimiser, not it."""
    done = subprocess.run([sys.executable, str(SIMULATION), *map(repr, gains.tolist())], capture_output=True,
                          text=True, check=True, start_new_session=True)
    return float(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=1500, help="evaluations in all")
    parser.add_argument("--pop", type=int, default=30, help="population size")
    parser.add_argument("--workers", type=int, default=4, help="worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", type=Path, default=Path("pid.ckpt"), help="where the run is saved")
    args = parser.parse_args()

    if args.checkpoint.exists():
        opt = hs.AskTell.load(args.checkpoint, progress=True)
        print(f"continuing {args.checkpoint}: {opt.evals:,} evaluations done", file=sys.stderr)
    else:
        opt = hs.AskTell("de", dim=3, lower=LOWER, upper=UPPER, evals=args.evals, seed=args.seed, device="cpu",
                         progress=True, pop_size=args.pop)
    with hs.Workers(args.workers) as workers, interruptible(poll=True) as stop:
        while not opt.done and not stop:
            gains = opt.ask()
            opt.tell(workers.map(simulate, gains))
            opt.save(args.checkpoint)
    opt.close()
    if stop:
        print(f"interrupted after {opt.evals:,} evaluations; saved to {args.checkpoint}: run the same command to "
              "continue", file=sys.stderr)
        return stop.exception().exit_code
    kp, ki, kd = opt.best_x.tolist()
    print(f"best gains KP={kp:.6g} KI={ki:.6g} KD={kd:.6g}: cost {float(opt.best_f):.6g} "
          f"after {opt.evals:,} evaluations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
