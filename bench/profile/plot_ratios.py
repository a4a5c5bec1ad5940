#!/usr/bin/python3
"""Bar chart of same-run A/B ratios against a baseline (build_ab.sh, swr_ab.sh output).

  bench/profile/plot_ratios.py OUT.png "title" "baseline name" GROUP:A_RATIO:B_RATIO ... [--labels=A,B]

Each GROUP (a case, e.g. "int4, 64MB") gets two bars, A's and B's ratio to the baseline
measured in the same run; a dashed line marks 1 (the baseline) and, with --target X, the target.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in argv[1:] if a.startswith("--"))
    out, title, base = args[:3]
    groups = [g.split(":") for g in args[3:]]
    labels = opts.get("labels", "A (before),B (after)").split(",")
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    width = 0.38
    xs = range(len(groups))
    for k, lab in enumerate(labels):
        vals = [float(g[1 + k]) for g in groups]
        bars = ax.bar([x + (k - 0.5) * width for x in xs], vals, width, label=lab)
        for b, v in zip(bars, vals):
            ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.2f}x", ha="center", va="bottom",
                    fontsize=8)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    if "target" in opts:
        ax.axhline(float(opts["target"]), color="red", linestyle=":", linewidth=0.8,
                   label=f"target {opts['target']}x")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([g[0] for g in groups])
    ax.set_ylabel(f"time / {base}'s (same run)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
