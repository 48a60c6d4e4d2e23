"""Figures of prequential results (matplotlib, object-oriented API: no global pyplot state)."""

from __future__ import annotations

#: characters per line of the figure's title (8 inches at 9 points fit about 110)
TITLE_WIDTH = 100


def plot_prequential(result, path=None, title: str | None = None):
    """Windowed MER (alpha lines dashed), RIS and MAE against the examples seen; the stream's
    change points, if any, are marked (dotted) and the axis label says so.  The title (default:
    the model and the stream, in full) wraps onto as many lines as it needs.  A point model gets
    the MAE panel only."""
    from ._extras import need

    Figure = need("matplotlib.figure", "plotting").Figure

    w = result.windows()
    levels = w.get("intervals", {})
    panels = (["mer", "ris"] if levels else []) + ["mae"]
    fig = Figure(figsize=(8, 1.2 + 2.0 * len(panels)), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
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


def figure_title(model: str, stream: str, width: int = TITLE_WIDTH) -> str:
    """``"{model} on {stream}"`` wrapped on lines of at most ``width`` characters (breaking after
    commas and spaces, never inside a word), so that a long model description is never cut."""
    import textwrap

    lines = textwrap.wrap(
        f"{model} on {stream}", width, break_long_words=False, break_on_hyphens=False
    )
    return "\n".join(lines)
