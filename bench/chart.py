#!/usr/bin/env python3
"""Draw bench/figures.tsv as a bar chart, bench/figures.svg (issue 23, item 5).

    bench/chart.py [TSV [SVG]]

Rows with a peer: how many times better rngd is than its peer, a bar on a log scale of
that ratio (right of 1x: rngd better; left: worse), both figures and the ratio printed, a
tick at a ratio target. Rows without a peer: rngd's figure, a linear bar, the rows of one
unit on one scale. The title names the run, commit and machine of the TSV's header
comment ("# run: ...", "# commit: ...", "# machine: ..."). The SVG depends only on the
TSV (no date, no randomness), so rerunning it after the figures change is the whole job.
Python 3 standard library only.
"""

import math
import os
import sys
from xml.sax.saxutils import escape

COLUMNS = ["benchmark", "unit", "ours", "peer", "peer_name", "better", "ratio", "target", "note"]

WIDTH = 1040
LEFT = 20  # labels
VALUES_X = 270  # the two figures
AXIS_X0, AXIS_X1 = 500, 800  # the ratio axis
BAR_X0, BAR_X1 = 270, 760  # bars of rows without a peer
ROW_H = 38
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
GOOD, BAD, OWN, GREY = "#2e7d32", "#c62828", "#1565c0", "#666666"


def read_tsv(path):
    """Returns (header dict, list of row dicts); exits with a message on a malformed file."""
    header, rows, names = {}, [], None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep and key.strip() in ("run", "commit", "machine"):
                    header[key.strip()] = value.strip()
                continue
            fields = line.split("\t")
            if names is None:
                if fields != COLUMNS:
                    sys.exit(f"{path}:{lineno}: columns must be: {' '.join(COLUMNS)}")
                names = fields
                continue
            if len(fields) != len(names):
                sys.exit(f"{path}:{lineno}: {len(fields)} fields, want {len(names)}")
            row = {k: (None if v.strip() == "-" else v.strip()) for k, v in zip(names, fields)}
            try:
                row["ours_v"] = float(row["ours"])
                row["peer_v"] = None if row["peer"] is None else float(row["peer"])
                row["ratio_v"] = None if row["ratio"] is None else float(row["ratio"])
            except ValueError as e:
                sys.exit(f"{path}:{lineno}: {e}")
            if row["better"] not in ("higher", "lower"):
                sys.exit(f"{path}:{lineno}: better must be 'higher' or 'lower'")
            rows.append(row)
    if names is None:
        sys.exit(f"{path}: no column header line")
    return header, rows


def number(text):
    """The figure as the TSV wrote it, digits grouped by thousands: 185232 -> 185,232."""
    whole, dot, frac = text.partition(".")
    sign = "-" if whole.startswith("-") else ""
    whole = whole.lstrip("-")
    return sign + f"{int(whole):,}" + dot + frac


def times_better(row):
    """How many times better ours is than the peer (> 1: better), or None if undefined."""
    if row["ratio_v"] is not None:
        return row["ratio_v"]
    ours, peer = row["ours_v"], row["peer_v"]
    if ours <= 0 or peer <= 0:
        return None
    return ours / peer if row["better"] == "higher" else peer / ours


def ratio_text(r):
    if r >= 1:
        return f"{r:.3g}x better" if r < 100 else f"{r:.0f}x better"
    return f"{1 / r:.3g}x worse"


def targets(row):
    """Yields (kind, value, text, met) for each target of a row: kind 'ratio' or 'value'."""
    if row["target"] is None:
        return
    for t in row["target"].split(","):
        t = t.strip()
        if t.endswith("x"):
            want = float(t[:-1])
            r = times_better(row)
            met = r is not None and r >= want
            yield "ratio", want, f">= {number(t[:-1])}x", met
        else:
            want = float(t)
            ours = row["ours_v"]
            met = ours >= want if row["better"] == "higher" else ours <= want
            sign = ">=" if row["better"] == "higher" else "<="
            yield "value", want, f"{sign} {number(t)} {row['unit']}", met


class Svg:
    def __init__(self):
        self.parts = []

    def text(self, x, y, s, size=12, fill="#222222", anchor="start", weight="normal"):
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}" '
            f'text-anchor="{anchor}" font-weight="{weight}">{escape(s)}</text>'
        )

    def rect(self, x, y, w, h, fill, opacity=1.0):
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{h:.1f}" '
            f'fill="{fill}" fill-opacity="{opacity:.2f}"/>'
        )

    def line(self, x1, y1, x2, y2, stroke="#999999", width=1.0, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}" stroke-width="{width}"{d}/>'
        )


def draw(header, rows):
    peered = [r for r in rows if r["peer_v"] is not None]
    alone = [r for r in rows if r["peer_v"] is None]
    svg = Svg()
    y = 30.0
    svg.text(LEFT, y, "rngd against its peers (issue 23)", size=18, weight="bold")
    y += 20
    sub = [header[k] for k in ("run", "commit", "machine") if k in header]
    svg.text(LEFT, y, " \u00b7 ".join(sub), size=12, fill=GREY)
    y += 14

    if peered:
        ratios = [times_better(r) for r in peered]
        logs = [math.log10(r) for r in ratios if r is not None]
        logs += [math.log10(v) for r in peered for k, v, _, _ in targets(r) if k == "ratio"]
        lo = min([-1.0] + [math.floor(v) for v in logs])
        hi = max([1.0] + [math.ceil(v) for v in logs])

        def ax(v):
            return AXIS_X0 + (math.log10(v) - lo) / (hi - lo) * (AXIS_X1 - AXIS_X0)

        y += 22
        svg.text(LEFT, y, "Against the peer, same run", size=14, weight="bold")
        svg.text(AXIS_X0, y, "times better (log scale; right of 1x: rngd better; dashed: target)",
                 size=11, fill=GREY)
        y += 10
        top = y
        bottom = y + ROW_H * len(peered)
        for d in range(int(lo), int(hi) + 1):
            for m in (1, 3) if d < hi else (1,):
                v = m * 10.0 ** d
                x = ax(v)
                svg.line(x, top, x, bottom, stroke="#bbbbbb" if m == 1 and d == 0 else "#e4e4e4",
                         width=1.5 if d == 0 and m == 1 else 1.0)
                label = f"{v:g}x"
                svg.text(x, bottom + 14, label, size=10, fill=GREY, anchor="middle")
        for row, r in zip(peered, ratios):
            draw_peered_row(svg, row, r, y, ax)
            y += ROW_H
        y = bottom + 24

    if alone:
        y += 22
        svg.text(LEFT, y, "rngd alone (no peer runs these)", size=14, weight="bold")
        y += 10
        unit = None
        for row in alone:
            if row["unit"] != unit:
                unit = row["unit"]
                scale = max(r["ours_v"] for r in alone if r["unit"] == unit) or 1.0
                y += 16
                better = "lower" if row["better"] == "lower" else "higher"
                svg.text(BAR_X0, y, f"{unit} ({better} is better)", size=11, fill=GREY)
                y += 4
            draw_alone_row(svg, row, y, scale)
            y += ROW_H - 8
    height = y + 16
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="{FONT}">'
    )
    background = f'<rect x="0" y="0" width="{WIDTH}" height="{height:.0f}" fill="#ffffff"/>'
    return "\n".join([head, background] + svg.parts + ["</svg>"]) + "\n"


def draw_peered_row(svg, row, r, y, ax):
    mid = y + ROW_H / 2
    svg.text(LEFT, mid - 2, row["benchmark"], size=12, weight="bold")
    if row["note"]:
        svg.text(LEFT, mid + 12, row["note"], size=10, fill=GREY)
    unit = row["unit"]
    svg.text(VALUES_X, mid - 2, f"rngd {number(row['ours'])} {unit}", size=12)
    svg.text(VALUES_X, mid + 12, f"{row['peer_name']} {number(row['peer'])} {unit}",
             size=11, fill=GREY)
    marks = list(targets(row))
    for kind, want, _, _ in marks:
        if kind == "ratio":
            x = ax(want)
            svg.line(x, y + 4, x, y + ROW_H - 4, stroke="#333333", width=1.5, dash="3,2")
    if r is None:
        svg.text(ax(1) + 6, mid + 4, "no ratio (a figure is 0)", size=11, fill=GREY)
    else:
        x0, x1 = ax(1), ax(r)
        color = GOOD if r >= 1 else BAD
        svg.rect(min(x0, x1), mid - 8, abs(x1 - x0), 16, color, 0.85)
        svg.text(AXIS_X1 + 6, mid + 4, ratio_text(r), size=12, fill=color, weight="bold")
    if marks:
        verdicts = [f"{text}: {'met' if met else 'missed'}" for _, _, text, met in marks]
        met_all = all(m for _, _, _, m in marks)
        svg.text(AXIS_X1 + 6, mid + 16, "target " + ", ".join(verdicts), size=10,
                 fill=GREY if met_all else BAD)


def draw_alone_row(svg, row, y, scale):
    mid = y + (ROW_H - 8) / 2
    svg.text(LEFT, mid, row["benchmark"], size=12, weight="bold")
    if row["note"]:
        svg.text(LEFT, mid + 12, row["note"], size=10, fill=GREY)
    w = row["ours_v"] / scale * (BAR_X1 - BAR_X0)
    svg.rect(BAR_X0, mid - 10, w, 14, OWN, 0.8)
    svg.text(BAR_X0 + w + 6, mid + 1, f"{number(row['ours'])} {row['unit']}", size=12)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    tsv = argv[1] if len(argv) > 1 else os.path.join(here, "figures.tsv")
    out = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(tsv), "figures.svg")
    if len(argv) > 3:
        sys.exit("usage: bench/chart.py [TSV [SVG]]")
    header, rows = read_tsv(tsv)
    data = draw(header, rows)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(data)
    os.replace(tmp, out)


if __name__ == "__main__":
    main(sys.argv)
