"""Where a check-mode finding sits in its `.cu` source: the loop whose iterations a race spans (loop_carried) and the
`if` a barrier is under (under_if), read from the file's text with its comments blanked.

kp.check words its findings with these; this module reads files and never builds, loads or raises.
"""

import os
import re
from pathlib import Path

from kp.files import ROOT


def code_of(file):
    """The `.cu` text of `file` with its comments blanked (newlines kept), or None."""
    path = Path(ROOT, file) if not os.path.isabs(file) else Path(file)
    try:
        text = path.read_text()
    except OSError:
        return None
    blank = lambda m: re.sub(r"[^\n]", " ", m[0])  # noqa: E731
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def closing(code, i):
    """Index of the bracket closing the one at `i`, or -1."""
    depth = 0
    for j in range(i, len(code)):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j
    return -1


def loop_carried(file, low, high):
    """(loop line, [barrier lines]) when source lines low < high of `file` lie in the body of one loop (the innermost)
    with a `__syncthreads()` between them: two accesses there that no barrier orders are in different iterations,
    the one at `low` in the later. None otherwise."""
    code = code_of(file) if file else None
    if not code or low >= high:
        return None
    line_at = lambda pos: code.count("\n", 0, pos) + 1  # noqa: E731
    best = None
    for m in re.finditer(r"\b(for|while)\s*\(", code):
        start = line_at(m.start())
        close = closing(code, m.end() - 1)
        brace = re.compile(r"\s*\{").match(code, close + 1) if close > 0 else None
        end = closing(code, brace.end() - 1) if brace else -1
        if start <= low and end > 0 and line_at(end) >= high and (not best or start > best[0]):
            best = (start, brace.end(), end)
    if not best:
        return None
    body = code[best[1] : best[2]]
    barriers = sorted(
        {line_at(best[1] + b.start()) for b in re.finditer(r"\b__syncthreads\s*\(", body)} & set(range(low + 1, high))
    )
    return (best[0], barriers) if barriers else None


def opening(code, i):
    """Index of the bracket opening the one that closes at `i`, or -1."""
    depth = 0
    for j in range(i, -1, -1):
        depth += {")": 1, "}": 1, "(": -1, "{": -1}.get(code[j], 0)
        if depth == 0:
            return j
    return -1


def under_if(file, line):
    """The line of the `if` (or `else`) that the `__syncthreads()` on source `line` of `file` is under (through any
    loops), or None: at a function's level, or not found."""
    code = code_of(file) if file else None
    starts = [0] + [m.end() for m in re.finditer("\n", code or "")]
    if not code or line > len(starts) or not (m := re.compile(r"__syncthreads\s*\(").search(code, starts[line - 1])):
        return None
    i = m.start()
    while i > 0:
        head = code[:i].rstrip()
        if head.endswith("{"):
            head = head[:-1].rstrip()
        elif not head.endswith(")") and not re.search(r"\belse$", head):  # within a block: to its `{`
            j = len(head) - 1
            while j >= 0 and code[j] != "{":
                j = opening(code, j) - 1 if code[j] in ")}" else j - 1
            if j < 0:
                return None
            i = j
            continue
        if re.search(r"\belse$", head):
            return head.count("\n") + 1
        if not head.endswith(")"):
            return None  # a block of its own, or a function's body without a parameter list we know
        start = opening(code, len(head) - 1)
        word = re.search(r"(\w+)\s*$", code[:start])
        if not word or word[1] not in ("if", "for", "while", "switch"):
            return None  # a function's body
        if word[1] in ("if", "switch"):
            return code[:start].count("\n") + 1
        i = word.start()  # a loop: the barrier is under what the loop is under
    return None
