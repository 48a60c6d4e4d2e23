"""Figures of prequential results (matplotlib, object-oriented API: no global pyplot state)."""

from __future__ import annotations

#: characters per line of the figure's title (8 inches at 9 points fit about 110)
TITLE_WIDTH = 100


def plot_prequential(result, path=None, title: str | None = None):
    """Windowed MER (alpha lines dashed), RIS and MAE against the examples seen; the stream's
    change points, if any, are marked (dotted) and the axis label says so.  The title (default:
    the model and the stream, in full) wraps onto as many lines as it needs.  A point model gets
    the MAE panel only.  Intervals also get conditional coverage on top: the MER per width bin
    (narrowest to widest, :attr:`width_bins`) and, evaluated with ``groups``, per group (each
    family's groups, the worst at each level outlined)."""
    w = result.windows()
    levels = w.get("intervals", {})
    panels = (["mer", "ris"] if levels else []) + ["mae"]
    by_width = getattr(result, "width_bins", None) or {}
    groups = getattr(result, "groups", None) or {}
    fig, axes = windowed_figure(len(panels), by_width, groups)
    x = w["end"]
    colours = ["C0", "C1", "C2", "C3", "C4", "C5"]
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "mae":
            ax.plot(x, w["mae"], color="C7", lw=1.2)
            ax.set_ylabel("MAE")
        else:
            for i, (lvl, m) in enumerate(levels.items()):
                c = colours[i % len(colours)]
                ax.plot(x, m[panel], color=c, lw=1.2, label=f"alpha = {lvl}")
                if panel == "mer":
                    ax.axhline(float(lvl), color=c, ls="--", lw=0.8)
            ax.set_ylabel(panel.upper())
            if panel == "mer":
                ax.legend(loc="upper right", fontsize=8, frameon=False)
    return finish_windowed(fig, axes, result, title, path)


def windowed_figure(n_panels: int, by_width: dict, groups: dict, what: str = "width"):
    """``(figure, axes)`` of a result's figure: the conditional-coverage row on top when there
    are width (or set size) bins (:func:`conditional_panels`), then ``n_panels`` windowed panels
    sharing the examples' axis."""
    from ._extras import need

    Figure = need("matplotlib.figure", "plotting").Figure
    top = 1 if by_width else 0
    fig = Figure(figsize=(8, 1.2 + 2.0 * (n_panels + top)), layout="constrained")
    grid = fig.add_gridspec(n_panels + top, 2 if groups else 1)
    if top:
        conditional_panels(fig, grid, by_width, groups, what)
    axes = []
    for i in range(n_panels):
        ax = fig.add_subplot(grid[top + i, :], sharex=axes[0] if axes else None)
        if i + 1 < n_panels:
            ax.tick_params(labelbottom=False)
        axes.append(ax)
    return fig, axes


def finish_windowed(fig, axes, result, title: str | None, path):
    """The windowed panels' drift points (dotted) and grid, the examples' axis label, the title
    (default: the model and the stream); the figure saved to ``path`` if given, and returned."""
    for ax in axes:
        for cp in result.change_points:
            ax.axvline(cp, color="k", ls=":", lw=0.9)
        ax.grid(alpha=0.3)
    kind = "sliding" if result.step < result.window else "tumbling"
    drift = "; dotted: drift points" if result.change_points else ""
    axes[-1].set_xlabel(f"examples ({kind} windows of {result.window:,}{drift})")
    fig.suptitle(title or figure_title(result.model, result.stream), fontsize=9)
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


_COLOURS = ["C0", "C1", "C2", "C3", "C4", "C5"]


def conditional_panels(fig, grid, by_width: dict, groups: dict, what: str = "width") -> None:
    """The top row of a result's figure: MER per width (or set size) bin and, with groups, per
    group."""
    _width_panel(fig.add_subplot(grid[0, 0]), by_width, what)
    if groups:
        _group_panel(fig.add_subplot(grid[0, 1]), groups)


def _width_panel(ax, by_width: dict, what: str = "width") -> None:
    """MER per width bin at each level against the bin's mean width (bins of about equal
    rows)."""
    for i, (alpha, lv) in enumerate(by_width.items()):
        c = _COLOURS[i % len(_COLOURS)]
        mer = [b["mer"] for b in lv["bins"]]
        size = [b["mpiw"] for b in lv["bins"]]
        ax.plot(size, mer, "o-", color=c, lw=1.2, label=f"alpha = {alpha:g}")
        ax.axhline(float(alpha), color=c, ls="--", lw=0.8)
    ax.set_xlabel(f"mean {what} of the bin (bins of about equal rows)")
    ax.set_ylabel("MER")
    ax.set_title(f"conditional coverage by {what}", fontsize=9)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.grid(alpha=0.3)


def _group_panel(ax, groups: dict) -> None:
    """MER per group of each family at each level (bars), the worst group outlined."""
    labels, rows = [], []
    for name, fam in groups.items():
        for v, g in fam["groups"].items():
            labels.append(f"{name}={v}" if len(groups) > 1 else str(v))
            rows.append((name, v, g))
    alphas = list(next(iter(groups.values()))["worst"]) if groups else []
    width = 0.8 / max(1, len(alphas))
    for i, alpha in enumerate(alphas):
        c = _COLOURS[i % len(_COLOURS)]
        xs = [k + (i - (len(alphas) - 1) / 2) * width for k in range(len(rows))]
        mer = [g["intervals"][alpha]["mer"] for _, _, g in rows]
        bars = ax.bar(xs, mer, width=width, color=c, alpha=0.7, label=f"alpha = {alpha:g}")
        for bar, (name, v, _) in zip(bars, rows, strict=True):
            worst = groups[name]["worst"].get(alpha)
            if worst is not None and worst["group"] == v:
                bar.set_edgecolor("k")
                bar.set_linewidth(1.5)
        ax.axhline(float(alpha), color=c, ls="--", lw=0.8)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7, rotation=30 if len(rows) > 6 else 0)
    ax.set_ylabel("MER")
    ax.set_title("MER per group (worst outlined)", fontsize=9)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.grid(alpha=0.3, axis="y")


def figure_title(model: str, stream: str, width: int = TITLE_WIDTH) -> str:
    """``"{model} on {stream}"`` wrapped on lines of at most ``width`` characters (breaking after
    commas and spaces, never inside a word), so that a long model description is never cut."""
    import textwrap

    lines = textwrap.wrap(
        f"{model} on {stream}", width, break_long_words=False, break_on_hyphens=False
    )
    return "\n".join(lines)
