"""A lesson's op contract in one cell: `torch.library.opcheck` of each op, gradcheck of the autograd Function,
torch.compile against eager, and the autograd graph, answered as one table. kp.verify and kp.display run each check
(and raise as they do when one fails); this runs them quietly and says what they found. Notebook 01 runs each on its
own, to show the plumbing once; the later lessons call `check_contract`.
"""

import torch

from kp.display import show, show_graph
from kp.table import Table
from kp.verify import check_compiled, gradcheck


def _shapes(args):
    return ", ".join(f"{tuple(a.shape)} {str(a.dtype).removeprefix('torch.')}" for a in args if torch.is_tensor(a))


def check_contract(ops=(), gradcheck_of=None, compiled=None, graph=None):
    """`ops`: (op, args) pairs for opcheck (an op of a loaded kernel, e.g. `ext.poly2`, and its arguments);
    `gradcheck_of`: (fn, inputs) or (fn, inputs, name), in float64; `compiled`: (model, *inputs) for torch.compile;
    `graph`: (tensor, params) for the autograd graph, drawn under the table. Returns the table."""
    rows = []
    for op, args in ops:
        torch.library.opcheck(op.default, tuple(args))
        rows.append({"check": f"opcheck {op.__name__}", "on": _shapes(args), "result": "passed"})
    if gradcheck_of is not None:
        fn, inputs, *name = gradcheck_of
        what = gradcheck(fn, inputs, *name, quiet=True)
        rows.append({"check": "gradcheck", "on": what, "result": "passed"})
    if compiled is not None:
        model, *inputs = compiled
        done = check_compiled(model, *inputs, quiet=True)
        name = getattr(model, "__name__", type(model).__name__)
        result = f"matches eager, max abs error {done.kp_max_error:.1e} ({done.kp_seconds:.1f} s)"
        rows.append({"check": "torch.compile(fullgraph=True)", "on": f"{name}({_shapes(inputs)})", "result": result})
    table = Table(rows, "the op's contract: what lesson 01 showed step by step")
    show("Markdown", table.markdown(), table.markdown())
    if graph is not None:
        show_graph(*graph)
    return table
