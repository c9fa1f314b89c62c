"""Graphviz picture of a kernel: partitions as lanes (clusters) holding their pipe events in program
order, pipes as edges between lanes — solid commit→wait edges labelled with the full barrier and its
count, dashed release→acquire edges labelled with the empty barrier and its count."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..ir.nodes import Event, For, If, Stmt
from .report import KernelReport

_PALETTE = ["#dbe9f6", "#fde2cf", "#dff0d8", "#eadcf3", "#fbe7ea", "#f3efd0"]


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _event_label(ev: Event) -> str:
    sel = ""
    if ev.reader or ev.fields:
        sel = "[" + " ".join(filter(None, [ev.reader, f"fields=({', '.join(ev.fields)})" if ev.fields else ""])) + "]"
    return f"{ev.pipe}{sel}.{ev.verb}({ev.index})"


def render_dot(reports: list[KernelReport]) -> str:
    out = ["digraph tle {", '  rankdir=TB; newrank=true; fontname="Helvetica";',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    for ki, rep in enumerate(reports):
        prog = rep.program
        ids: dict[int, str] = {}  # id(Event) -> node id
        heads: list[str] = []  # first node of each lane, to keep lanes in declaration order
        events: list[tuple[str, Event]] = []  # (partition, event)
        out.append(f"  subgraph cluster_k{ki} {{")
        v = rep.verdict
        status = "no verdict" if v is None else {"proved": "verified", "rejected": "REJECTED",
                                                 "bounded": "BOUNDED (not proved)",
                                                 "unknown": "UNKNOWN (not proved)"}[v.kind]
        out.append(f"    label={_q(f'kernel {prog.name}: {status}')}; fontsize=14; style=dashed;")
        for pi, part in enumerate(prog.partitions):
            color = _PALETTE[pi % len(_PALETTE)]
            # the name quoted as every label is (a name the API gives may hold '"' or '\\'), then
            # DOT's line break
            head = _q(f"{part.name}{' (default)' if part.default else ''}")[:-1] + \
                f"\\nwarps={part.warps}" + (f" regs={part.regs}" if part.regs else "") + '"'
            out.append(f"    subgraph cluster_k{ki}_p{pi} {{")
            out.append(f'      label={head}; style="filled"; fillcolor="{color}"; color="#888888";')
            chain: list[str] = []

            def walk(body: tuple[Stmt, ...], depth: int) -> None:
                for s in body:
                    if isinstance(s, Event):
                        nid = f"k{ki}_e{len(ids)}"
                        ids[id(s)] = nid
                        events.append((part.name, s))
                        out.append(f"      {nid} [label={_q('  ' * depth + _event_label(s) + f'  :{s.loc.line}')}, "
                                   f'fillcolor="white"];')
                        chain.append(nid)
                    elif isinstance(s, For):
                        nid = f"k{ki}_l{len(ids)}_{len(chain)}"
                        rng = f"range({s.start}, {s.stop}" + (f", {s.step})" if s.step != 1 else ")")
                        out.append(f"      {nid} [label={_q('  ' * depth + f'for {s.var} in {rng}')}, "
                                   f'shape=plaintext, style=""];')
                        chain.append(nid)
                        walk(s.body, depth + 1)
                    elif isinstance(s, If):
                        nid = f"k{ki}_i{len(ids)}_{len(chain)}"
                        out.append(f"      {nid} [label={_q('  ' * depth + f'if {s.cond}')}, shape=plaintext, style=\"\"];")
                        chain.append(nid)
                        walk(s.then, depth + 1)
                        if s.orelse:
                            nid2 = nid + "e"
                            out.append(f"      {nid2} [label={_q('  ' * depth + 'else')}, shape=plaintext, style=\"\"];")
                            chain.append(nid2)
                            walk(s.orelse, depth + 1)

            walk(part.body, 0)
            if chain:
                heads.append(chain[0])
            for a, b in zip(chain, chain[1:]):
                out.append(f'      {a} -> {b} [color="#999999", arrowsize=0.5];')
            out.append("    }")
        if len(heads) > 1:
            out.append("  { rank=same; " + " -> ".join(heads) + " [style=invis]; }")
        out.append("  }")
        # Pipe edges, labelled with the barrier each hand-off goes through.
        roles = rep.ctx.resolved_roles or {}
        by_key = {}
        for b in rep.barriers:
            by_key.setdefault((b.pipe, b.kind, b.group), b)
        for pname, r in roles.items():
            for g in r.groups:
                full = by_key.get((pname, "full", g.index)) or by_key.get((pname, "named", g.index))
                empty = by_key.get((pname, "empty", g.index))
                writers = [(p, e) for p, e in events if e.pipe == pname and e.is_writer]
                for rname in g.readers:
                    readers = [(p, e) for p, e in events if e.pipe == pname and not e.is_writer
                               and (e.reader or "") == rname]
                    for _, w in writers:
                        for _, rd in readers:
                            if w.verb in ("commit", "close") and rd.verb == "wait" and full:
                                lbl = (f"{pname}.{full.kind} g{g.index} ×{full.count}"
                                       + (" +fence" if full.fence else ""))
                                out.append(f"  {ids[id(w)]} -> {ids[id(rd)]} [label={_q(lbl)}, color=\"#1f5fa8\", "
                                           f"constraint=false];")
                            if rd.verb == "release" and w.verb in ("acquire", "close") and empty:
                                lbl = f"{pname}.empty g{g.index} ×{empty.count}"
                                out.append(f"  {ids[id(rd)]} -> {ids[id(w)]} [label={_q(lbl)}, style=dashed, "
                                           f"color=\"#b5651d\", constraint=false];")
    out.append("}")
    return "\n".join(out) + "\n"


class GraphvizError(Exception):
    """Graphviz's ``dot`` is missing or failed: the picture cannot be rendered."""


def check_renderer(path: Path) -> None:
    """GraphvizError when ``path`` is a picture and Graphviz's ``dot`` is not installed: checked
    before verifying, so that the refusal is the run's one line (render_image says the same)."""
    if shutil.which("dot") is None:
        raise GraphvizError("Graphviz's 'dot' is not installed; install graphviz "
                            f"(e.g. apt-get install graphviz) or write {path.with_suffix('.dot')} instead")


def render_image(dot_text: str, path: Path) -> None:
    """Render with Graphviz's ``dot`` into ``path`` (format from the suffix: svg, png, pdf). The
    picture comes back on dot's stdout and is written here, so a path that cannot be written is
    an OSError like any other output file, and a failing dot a GraphvizError with its message."""
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizError("Graphviz's 'dot' is not installed; install graphviz "
                            f"(e.g. apt-get install graphviz) or write {path.with_suffix('.dot')} instead")
    fmt = path.suffix.lstrip(".").lower()
    r = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode(), capture_output=True)
    if r.returncode != 0:
        msg = r.stderr.decode(errors="replace").strip().splitlines()
        raise GraphvizError(f"Graphviz's dot failed: {msg[0] if msg else f'exit status {r.returncode}'}")
    path.write_bytes(r.stdout)
