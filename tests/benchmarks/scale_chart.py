"""Plot TPC-DS pipeline runs of several scale factors: wall time and vCPU-s per GB of input against the scale factor.

    python -m tests.benchmarks.scale_chart OUT.png RESULTS_JSON [RESULTS_JSON ...]

Each ``results.json`` is one ``bench_tpcds`` run (one scale factor, several engines); an engine gets one line
across the runs that measured it. Failed runs are left out and listed on stdout. Nothing is measured here.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from tests.benchmarks.bench_tpcds import EngineRun, run_labels


def points(results: list[Path]) -> dict[str, list[tuple[float, float, float]]]:
    """Per engine label: (scale factor, wall seconds, vCPU-s per GB of input), ordered by scale factor."""
    lines: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for path in results:
        data = json.loads(path.read_text())
        runs = [EngineRun.from_json(raw) for raw in data["runs"]]
        for run, name in zip(runs, run_labels(runs), strict=True):
            if run.error:
                print(f"left out: {name} at SF {data['scale_factor']:g} failed")
                continue
            lines[name].append((data["scale_factor"], run.wall_s, run.cpu_s / data["input_gb"]))
    return {name: sorted(values) for name, values in lines.items()}


def plot(lines: dict[str, list[tuple[float, float, float]]], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (time_ax, cost_ax) = plt.subplots(1, 2, figsize=(12, 4.8))
    for name, values in lines.items():
        scale = [v[0] for v in values]
        time_ax.plot(scale, [v[1] for v in values], marker="o", label=name)
        cost_ax.plot(scale, [v[2] for v in values], marker="o", label=name)
        for sf, wall, cost in values:
            time_ax.annotate(f"{wall:.0f}", (sf, wall), textcoords="offset points", xytext=(4, 4), fontsize=8)
            cost_ax.annotate(f"{cost:.0f}", (sf, cost), textcoords="offset points", xytext=(4, 4), fontsize=8)
    for ax in (time_ax, cost_ax):
        ax.set_xscale("log")
        ax.set_xlabel("TPC-DS scale factor")
        ax.grid(True, which="both", alpha=0.3)
    time_ax.set_yscale("log")
    time_ax.set_ylabel("pipeline wall time, s (log)")
    cost_ax.set_yscale("log")  # per-task cost makes small scale factors an order of magnitude dearer
    cost_ax.axhline(250, color="grey", linestyle="--", linewidth=1)
    cost_ax.annotate(
        "goal: 250", (cost_ax.get_xlim()[1], 250), xytext=(-50, -12), textcoords="offset points", fontsize=8
    )
    cost_ax.set_ylabel("vCPU-s per GB of Parquet input (log)")
    handles, names = time_ax.get_legend_handles_labels()
    # below both plots: with four or more lines no corner of the time plot stays empty
    fig.legend(handles, names, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    out, results = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    machine = json.loads(results[0].read_text())["machine"]["cpu"].rsplit(", ", 1)[-1]
    plot(points(results), out, f"TPC-DS pipeline against scale factor ({machine}, lake data on S3)")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
