"""The Markdown report: tables, figures (PNG, matplotlib) and plain statements."""

from __future__ import annotations

import math
from pathlib import Path


def fmt(v, digits: int = 3) -> str:
    """A cell: numbers rounded, NaN as an em dash, strings as they are."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        if math.isinf(v):
            return "inf"
        if v != 0 and (abs(v) >= 10**5 or abs(v) < 10 ** (-digits)):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}f}"
    return str(v)


def table(header: list[str], rows: list[list], digits: int = 3) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(fmt(c, digits) for c in r) + " |" for r in rows]
    return "\n".join(out)


class Report:
    """Sections of Markdown and the figures they show, written to ``out/report.md``."""

    def __init__(self, out: Path, title: str):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.parts = [f"# {title}\n"]
        self.tables: dict[str, tuple[list[str], list[list]]] = {}

    def h(self, text: str, level: int = 2) -> None:
        self.parts.append(f"\n{'#' * level} {text}\n")

    def p(self, text: str) -> None:
        self.parts.append(text.strip() + "\n")

    def table(self, key: str, header: list[str], rows: list[list], digits: int = 3) -> None:
        """A table, also kept (by ``key``) for the JSON results and the README."""
        self.tables[key] = (header, rows)
        self.parts.append(table(header, rows, digits) + "\n")

    def figure(self, fig, name: str, caption: str) -> None:
        path = self.out / f"{name}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)
        self.parts.append(f"![{caption}]({path.name})\n\n*{caption}*\n")

    def write(self) -> Path:
        path = self.out / "report.md"
        path.write_text("\n".join(self.parts))
        return path


def worse(ours: float, theirs: float, lower_is_better: bool = True, tol: float = 0.0) -> bool:
    """Whether ``ours`` is worse than ``theirs`` (by more than ``tol``)."""
    if any(isinstance(v, float) and math.isnan(v) for v in (ours, theirs)):
        return False
    return ours > theirs + tol if lower_is_better else ours < theirs - tol
