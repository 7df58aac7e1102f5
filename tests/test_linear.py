"""linear (Y = X·Wᵀ + b) on each target (cpu; cuda with a GPU): forward and each gradient against torch on irregular
sizes, through the 16 x 16 tiles and, past its threshold, the register-tiled kernel (check mode and gradcheck of that
one on a copy whose threshold lets small shapes take it), the notebook's autograd Function and the op's own autograd
formula (kernels/linear_ops.py), ctx.needs_input_grad, gradcheck, opcheck, torch.compile, every bad input (in the
binding and in the fake implementations), and the ONNX round trip in onnxruntime."""

import importlib.util
import math
import re
import warnings

import pytest
import torch
import torch.nn.functional as F
from conftest import edit, on

import helpers
from kp.gpumodel.profile import profile

# (B, M, N): batch, in_features, out_features. 1x1x1 is smaller than a tile, 37x53x29 crosses tile edges
# everywhere, 128x256x64 is a multiple of the 16x16 tile, 15x17x33 sits one below, one above and one past two
# tiles (and past the bias kernel's 32 columns); the zeros are empty outputs and empty inner sums.
SIZES = [(1, 1, 1), (37, 53, 29), (128, 256, 64), (15, 17, 33), (0, 3, 4), (3, 0, 4), (3, 4, 0)]
# Sizes whose three products (outputs B x N, B x M, N x M) take linear_tiled_kernel: each output at least
# FAST_MIN_BLOCKS (16) blocks of 128 x 128, ragged in both dimensions; the first with odd leading dimensions (its
# element-by-element loads and stores), the second with multiples of 4 (its 16-byte Packs).
FAST_SIZES = [(385, 387, 389), (388, 516, 392)]
CU = (helpers.KERNELS / "linear.cu").read_text()


def constant(name, text=CU):
    return int(re.search(rf"\b{name} = (\d+)[,;]", text)[1])


def fast_blocks(rows, cols):
    """The blocks of linear_tiled_kernel over an output of rows x cols."""
    return -(-rows // constant("FAST_BM")) * -(-cols // constant("FAST_BN"))


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(5)


pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def linear_ext(target):
    return helpers.load_kernel("linear", target=target, quiet=True)


@pytest.fixture(scope="module")
def notebook(linear_ext, notebook_code):
    """The notebook's cell tagged autograd-function (LinearF, `linear` = LinearF.apply, MyLinear), over this build."""
    return notebook_code(
        "05_linear_regression_onnx", "autograd-function", torch=torch, nn=torch.nn, math=math, linear_ext=linear_ext
    )


@pytest.fixture(scope="module")
def linear_fn(notebook):
    return notebook["linear"]


def make(*shapes, dtype, requires_grad=False):
    """Random tensors. float64: normal values, compared with torch at assert_close's (tight) float64 tolerances.
    float32: small integers, so that every product and every partial sum is exact in float32 whatever the
    summation order, and the kernel must equal torch exactly."""
    if dtype == torch.float64:
        tensors = [torch.randn(s, dtype=dtype) for s in shapes]
    else:
        tensors = [torch.randint(-4, 5, s).to(dtype) for s in shapes]
    return [t.requires_grad_(requires_grad) for t in tensors]


def tolerance(dtype):
    return {"rtol": 0, "atol": 0} if dtype == torch.float32 else {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, M, N", SIZES)
def test_forward_matches_torch(linear_ext, B, M, N, dtype):
    x, weight, bias = make((B, M), (N, M), (N,), dtype=dtype)
    y = linear_ext.linear(x, weight, bias)
    assert y.shape == (B, N) and y.dtype == dtype
    torch.testing.assert_close(y, F.linear(x, weight, bias), **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, M, N", SIZES)
def test_each_gradient_op_matches_torch(linear_ext, B, M, N, dtype):
    x, weight, grad_y = make((B, M), (N, M), (B, N), dtype=dtype)
    torch.testing.assert_close(linear_ext.linear_grad_input(grad_y, weight), grad_y @ weight, **tolerance(dtype))
    torch.testing.assert_close(linear_ext.linear_grad_weight(grad_y, x), grad_y.t() @ x, **tolerance(dtype))
    torch.testing.assert_close(linear_ext.linear_grad_bias(grad_y), grad_y.sum(0), **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, M, N", FAST_SIZES)
def test_large_products_match_torch(linear_ext, B, M, N, dtype):
    """The forward and both gradients through linear_tiled_kernel (the last test shows where it starts)."""
    assert min(fast_blocks(B, N), fast_blocks(B, M), fast_blocks(N, M)) >= constant("FAST_MIN_BLOCKS")
    x, weight, bias, grad_y = make((B, M), (N, M), (N,), (B, N), dtype=dtype)
    torch.testing.assert_close(linear_ext.linear(x, weight, bias), F.linear(x, weight, bias), **tolerance(dtype))
    torch.testing.assert_close(linear_ext.linear_grad_input(grad_y, weight), grad_y @ weight, **tolerance(dtype))
    torch.testing.assert_close(linear_ext.linear_grad_weight(grad_y, x), grad_y.t() @ x, **tolerance(dtype))
    torch.testing.assert_close(linear_ext.linear_grad_bias(grad_y), grad_y.sum(0), **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_bias_gradient_sums_chunks_of_rows_the_same_way_every_run(linear_ext, dtype):
    """Past BIAS_CHUNK rows, two launches (the chunks' column sums, then theirs); 33 columns: one past a block's 32.
    The same bits on every run, and in check mode nothing found."""
    B = 2 * constant("BIAS_CHUNK") + 3
    (grad_y,) = make((B, 33), dtype=dtype)
    db = linear_ext.linear_grad_bias(grad_y)
    torch.testing.assert_close(db, grad_y.sum(0), **tolerance(dtype))
    assert all(torch.equal(linear_ext.linear_grad_bias(grad_y), db) for _ in range(3))
    checked = helpers.load_kernel("linear", target="cpu", check=True, quiet=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.linear_grad_bias, grad_y.cpu())
    assert [la.blocks for la in counted.launches] == [2 * 3, 2]  # 2 blocks of columns x 3 chunks, then 2
    torch.testing.assert_close(checked.linear_grad_bias(grad_y.cpu()), db.cpu(), **tolerance(dtype))


def test_the_register_tiled_kernel_takes_outputs_from_its_threshold_on():
    """In a check-mode build (the GPU model names each launch): an output of FAST_MIN_BLOCKS blocks takes
    linear_tiled_kernel, one of a block fewer the 16 x 16 tiles, in each of the three products; check mode finds
    nothing in either. An inner dimension of 3 keeps check mode quick."""
    checked = helpers.load_kernel("linear", target="cpu", check=True, quiet=True)
    assert constant("FAST_MIN_BLOCKS") == fast_blocks(385, 512) == fast_blocks(384, 640) + 1
    with torch.device("cpu"):  # check mode is the CPU stand-in's, whichever target this module runs on
        for (rows, cols), kind in [((385, 512), "linear_tiled_kernel"), ((384, 640), "16 x 16")]:
            x, weight, bias = make((rows, 3), (cols, 3), (cols,), dtype=torch.float64)
            g, w_t = make((rows, 3), (3, cols), dtype=torch.float64)
            calls = [
                (checked.linear, (x, weight, bias), F.linear(x, weight, bias), "linear_fwd_kernel"),
                (checked.linear_grad_input, (g, w_t), g @ w_t, "linear_bwd_input_kernel"),
                (checked.linear_grad_weight, (g.t().contiguous(), w_t), g @ w_t, "linear_bwd_weight_kernel"),
            ]
            for op, args, expected, simple in calls:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="sampled: ")
                    counted = profile(op, *args, max_blocks=4)
                launched = [la.kernel.split("<")[0] for la in counted.launches]
                assert launched == [kind if kind == "linear_tiled_kernel" else simple], (rows, cols, launched)
                torch.testing.assert_close(op(*args), expected)


def linear_copy(tmp_path_factory, name, value):
    """kernels/linear.cu (and its binding and _ops.py) copied with the constant `name` set to `value`."""
    folder = tmp_path_factory.mktemp(f"linear_{name.lower()}")
    for suffix in (".cu", "_binding.cpp", "_ops.py"):
        text = (helpers.KERNELS / f"linear{suffix}").read_text().replace('#include "common/', '#include "')
        (folder / f"linear{suffix}").write_text(text)
    edit(folder / "linear.cu", f"{name} = {constant(name)};", f"{name} = {value};")
    return folder / "linear.cu"


@pytest.fixture(scope="module")
def fast_everywhere(tmp_path_factory):
    """FAST_MIN_BLOCKS = 1: every product takes linear_tiled_kernel, so that small shapes exercise it in check mode
    and under gradcheck."""
    return linear_copy(tmp_path_factory, "FAST_MIN_BLOCKS", 1)


def test_past_gridDim_ys_limit_the_bias_gradient_takes_more_rows_per_block(tmp_path_factory):
    """The first stage's chunks run on gridDim.y, at most 65535 (BIAS_MAX_CHUNKS): past that many chunks of 256 rows
    each block sums more rows. Shown on a copy whose limit is 2 chunks: 773 rows take 2 blocks of 387 rows per column
    block, then the second stage; the sums right, the same bits every run, nothing found in check mode."""
    checked = helpers.load_kernel(linear_copy(tmp_path_factory, "BIAS_MAX_CHUNKS", 2), check=True, quiet=True)
    (grad_y,) = make((773, 33), dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.linear_grad_bias, grad_y)
    assert [la.blocks for la in counted.launches] == [2 * 2, 2]  # 2 blocks of columns x 2 chunks, then 2
    db = checked.linear_grad_bias(grad_y)
    torch.testing.assert_close(db, grad_y.sum(0), **tolerance(torch.float64))
    assert all(torch.equal(checked.linear_grad_bias(grad_y), db) for _ in range(3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_check_mode_finds_nothing_in_the_register_tiled_kernel(fast_everywhere, dtype):
    """Smaller than a block, ragged edges past one, K not a multiple of a tile or a Pack, and 16-byte Packs (every
    dimension a multiple of 4), in each of the three products."""
    checked = helpers.load_kernel(str(fast_everywhere), target="cpu", check=True, quiet=True)
    with torch.device("cpu"):  # check mode is the CPU stand-in's, whichever target this module runs on
        for B, M, N in [(3, 5, 7), (130, 33, 133), (132, 36, 136), (17, 129, 9)]:
            x, weight, bias, grad_y = make((B, M), (N, M), (N,), (B, N), dtype=dtype)
            calls = [
                (checked.linear, (x, weight, bias), F.linear(x, weight, bias), "true, true"),
                (checked.linear_grad_input, (grad_y, weight), grad_y @ weight, "true, false"),
                (checked.linear_grad_weight, (grad_y, x), grad_y.t() @ x, "false, false"),
            ]
            for op, args, expected, reads in calls:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="sampled: ")
                    counted = profile(op, *args)
                assert [la.kernel for la in counted.launches] == [f"linear_tiled_kernel<T, {reads}>"]
                torch.testing.assert_close(op(*args), expected, **tolerance(dtype))


@pytest.mark.parametrize("B, M, N", [(5, 7, 3), (9, 12, 10)])
def test_gradcheck_through_the_register_tiled_kernel(fast_everywhere, target, B, M, N):
    fast = helpers.load_kernel(str(fast_everywhere), target=target, quiet=True)
    inputs = make((B, M), (N, M), (N,), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fast.linear, inputs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, M, N", [(1, 1, 1), (37, 53, 29), (128, 256, 64)])
def test_autograd_function_matches_torch(linear_fn, B, M, N, dtype):
    x, weight, bias = make((B, M), (N, M), (N,), dtype=dtype, requires_grad=True)
    y = linear_fn(x, weight, bias)
    expected = F.linear(x, weight, bias)
    torch.testing.assert_close(y, expected, **tolerance(dtype))
    (grad_y,) = make((B, N), dtype=dtype)
    got = torch.autograd.grad(y, (x, weight, bias), grad_y)
    want = torch.autograd.grad(expected, (x, weight, bias), grad_y)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, M, N", [(1, 1, 1), (37, 53, 29), (15, 17, 33)])
def test_the_op_itself_is_differentiable(linear_ext, B, M, N, dtype):
    """kernels/linear_ops.py registers linear's autograd formula: no Function needed."""
    x, weight, bias = make((B, M), (N, M), (N,), dtype=dtype, requires_grad=True)
    y = linear_ext.linear(x, weight, bias)
    assert y.grad_fn is not None
    (grad_y,) = make((B, N), dtype=dtype)
    got = torch.autograd.grad(y, (x, weight, bias), grad_y)
    want = torch.autograd.grad(F.linear(x, weight, bias), (x, weight, bias), grad_y)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, **tolerance(dtype))


@pytest.mark.parametrize("B, M, N", [(37, 53, 29), (128, 256, 64), (16, 1024, 16)])
def test_float32_rounding_stays_within_the_dot_product_error_bound(linear_ext, B, M, N):
    """On normal values, float32 sums of M products round; torch's float32 F.linear misses assert_close's
    default float32 tolerance against the exact result at these sizes too. What any correct summation order
    guarantees is the standard bound |error| <= gamma_(M+1) * (|X|·|W|ᵀ + |b|), gamma_k = k·u / (1 - k·u),
    u = 2^-24. Dropping a single product would exceed it by a factor of ~1/(M·u)."""
    x, weight, bias = (torch.randn(s) for s in ((B, M), (N, M), (N,)))
    exact = F.linear(x.double(), weight.double(), bias.double())
    k, u = M + 1, 2.0**-24
    bound = k * u / (1 - k * u) * F.linear(x.double().abs(), weight.double().abs(), bias.double().abs())
    error = (linear_ext.linear(x, weight, bias).double() - exact).abs()
    assert (error <= bound).all(), f"max error / bound = {(error / bound).max():.3g}"


@pytest.mark.parametrize("via", ["notebook Function", "op itself"])
@pytest.mark.parametrize(
    "needs", [(True, False, False), (False, True, False), (False, False, True), (True, True, True)]
)
def test_backward_runs_only_the_kernels_it_needs(linear_ext, linear_fn, via, needs):
    tensors = make((5, 7), (3, 7), (3,), dtype=torch.float64)
    for t, need in zip(tensors, needs):
        t.requires_grad_(need)
    y = (linear_fn if via == "notebook Function" else linear_ext.linear)(*tensors)
    with helpers.OpsRun(linear_ext) as ops:
        y.backward(torch.ones_like(y))
    ran = {name for name in ops.names if name.startswith("linear_grad_")}
    assert ran == {
        op for op, need in zip(("linear_grad_input", "linear_grad_weight", "linear_grad_bias"), needs) if need
    }
    for t, need in zip(tensors, needs):
        assert (t.grad is not None) == need


@pytest.mark.parametrize("via", ["notebook Function", "op itself"])
@pytest.mark.parametrize("B, M, N", [(1, 1, 1), (5, 7, 3), (17, 19, 18)])
def test_gradcheck(linear_ext, linear_fn, via, B, M, N):
    inputs = make((B, M), (N, M), (N,), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(linear_fn if via == "notebook Function" else linear_ext.linear, inputs)


def test_non_contiguous_inputs(linear_ext):
    x, weight = torch.randn(53, 37, dtype=torch.float64).t(), torch.randn(53, 29, dtype=torch.float64).t()
    bias = torch.randn(29, 2, dtype=torch.float64)[:, 0]
    grad_y = torch.randn(29, 37, dtype=torch.float64).t()
    assert not (x.is_contiguous() or weight.is_contiguous() or bias.is_contiguous() or grad_y.is_contiguous())
    torch.testing.assert_close(linear_ext.linear(x, weight, bias), F.linear(x, weight, bias))
    torch.testing.assert_close(linear_ext.linear_grad_input(grad_y, weight), grad_y @ weight)
    torch.testing.assert_close(linear_ext.linear_grad_weight(grad_y, x), grad_y.t() @ x)
    torch.testing.assert_close(linear_ext.linear_grad_bias(grad_y), grad_y.sum(0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_model_matches_eager(notebook, dtype):
    """The notebook's Function in a two-layer model traces whole under torch.compile(fullgraph=True), backward
    included, and gives eager's outputs and gradients."""
    model = torch.nn.Sequential(notebook["MyLinear"](5, 8), torch.nn.Tanh(), notebook["MyLinear"](8, 3)).to(dtype)
    helpers.check_compiled(model, torch.randn(37, 5, dtype=dtype, requires_grad=True))


@pytest.mark.parametrize("where", ["binding", "fake"])
@pytest.mark.parametrize(
    "op, args, message",
    [
        (
            "linear",
            (torch.ones(2, 3, dtype=torch.int32), torch.ones(4, 3), torch.ones(4)),
            "linear: input must be float32 or float64, got Int",
        ),
        (
            "linear",
            (torch.ones(2, 3), torch.ones(4, 3, dtype=torch.float16), torch.ones(4)),
            "linear: weight must be float32 or float64, got Half",
        ),
        (
            "linear",
            (torch.ones(2, 3), torch.ones(4, 3, dtype=torch.float64), torch.ones(4)),
            "linear: weight has dtype Double but input has Float",
        ),
        (
            "linear",
            (torch.ones(2, 3), torch.ones(4, 3), torch.ones(4, dtype=torch.float64)),
            "linear: bias has dtype Double but input has Float",
        ),
        (
            "linear_grad_input",
            (torch.ones(2, 4), torch.ones(4, 3, dtype=torch.float64)),
            "linear_grad_input: weight has dtype Double but grad_output has Float",
        ),
        (
            "linear_grad_weight",
            (torch.ones(2, 4, dtype=torch.float64), torch.ones(2, 3)),
            "linear_grad_weight: input has dtype Float but grad_output has Double",
        ),
        (
            "linear_grad_bias",
            (torch.ones(2, 4, dtype=torch.int64),),
            "linear_grad_bias: grad_output must be float32 or float64, got Long",
        ),
    ],
)
def test_bad_dtypes_raise_a_runtime_error_naming_the_argument(linear_ext, target_device, where, op, args, message):
    """On the target's tensors the binding checks; on meta tensors the fake implementation does, with the same words."""
    device = target_device if where == "binding" else "meta"
    with pytest.raises(RuntimeError, match=message):
        getattr(linear_ext, op)(*(t.to(device) for t in args))


# Shapes that the binding refuses, and the fake implementations with the same message.
SHAPE_ERRORS = [
    ("linear", [(3,), (4, 3), (4,)], r"linear: input must be 2-D \(batch, in_features\), got shape \[3\]"),
    ("linear", [(1, 2, 3), (4, 3), (4,)], r"linear: input must be 2-D .*, got shape \[1, 2, 3\]"),
    (
        "linear",
        [(2, 3), (12,), (4,)],
        r"linear: weight must be 2-D \(out_features, in_features\), got shape \[12\]",
    ),
    ("linear", [(2, 3), (4, 3), (4, 1)], r"linear: bias must be 1-D \(out_features\), got shape \[4, 1\]"),
    (
        "linear",
        [(2, 3), (4, 5), (4,)],
        r"linear: weight has shape \[4, 5\] but input has \[2, 3\]: their in_features \(last dimensions\) must match",
    ),
    (
        "linear",
        [(2, 3), (4, 3), (5,)],
        r"linear: bias has shape \[5\] but weight has \[4, 3\]: their out_features \(first dimensions\) must match",
    ),
    (
        "linear_grad_input",
        [(2, 4), (5, 3)],
        r"linear_grad_input: weight has shape \[5, 3\] but grad_output has \[2, 4\]: their out_features",
    ),
    (
        "linear_grad_input",
        [(8,), (4, 3)],
        r"linear_grad_input: grad_output must be 2-D \(batch, out_features\), got shape \[8\]",
    ),
    (
        "linear_grad_weight",
        [(2, 4), (3, 3)],
        r"linear_grad_weight: input has shape \[3, 3\] but grad_output has \[2, 4\]: their batch sizes",
    ),
    (
        "linear_grad_weight",
        [(2, 4), (2, 3, 1)],
        r"linear_grad_weight: input must be 2-D \(batch, in_features\), got shape \[2, 3, 1\]",
    ),
    ("linear_grad_bias", [(4,)], r"linear_grad_bias: grad_output must be 2-D \(batch, out_features\), got shape \[4\]"),
]


@pytest.mark.parametrize("where", ["binding", "fake"])
@pytest.mark.parametrize("op, shapes, message", SHAPE_ERRORS)
def test_bad_shapes_raise_a_runtime_error_naming_the_argument(linear_ext, target_device, where, op, shapes, message):
    """On the target's tensors the binding checks; on meta tensors the fake implementation does, with the same words."""
    device = target_device if where == "binding" else "meta"
    with pytest.raises(RuntimeError, match=message):
        getattr(linear_ext, op)(*(torch.ones(s, device=device) for s in shapes))


@pytest.mark.parametrize(
    "op, args, message",
    [
        # A meta tensor among cpu tensors reaches the fake implementation (Meta outranks CPU in dispatch), not
        # the binding's "is on a device other than cpu and cuda": the fake refuses the mix, as the binding would.
        (
            "linear",
            (torch.ones(2, 3, device="meta"), torch.ones(4, 3), torch.ones(4)),
            "linear: weight is on cpu but input is on meta",
        ),
        (
            "linear",
            (torch.ones(2, 3), torch.ones(4, 3), torch.ones(4, device="meta")),
            "linear: bias is on meta but input is on cpu",
        ),
        (
            "linear_grad_weight",
            (torch.ones(2, 4, device="meta"), torch.ones(2, 3)),
            "linear_grad_weight: input is on cpu but grad_output is on meta",
        ),
    ],
)
def test_the_fakes_refuse_mixed_devices(linear_ext, target_device, op, args, message):
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        getattr(linear_ext, op)(*on(target_device, *args))


@pytest.mark.parametrize("where", ["binding", "fake"])
def test_too_many_columns_for_the_grid_is_refused_by_name(linear_ext, target_device, where):
    device = target_device if where == "binding" else "meta"
    limit = 65535 * 16
    with pytest.raises(RuntimeError, match=f"linear: weight has {limit + 1} out_features, more than .*{limit}"):
        linear_ext.linear(*(torch.ones(s, device=device) for s in ((1, 1), (limit + 1, 1), (limit + 1,))))
    with pytest.raises(RuntimeError, match=f"linear: input has {limit + 1} in_features, more than .*{limit}"):
        linear_ext.linear(*(torch.ones(s, device=device) for s in ((1, limit + 1), (1, limit + 1), (1,))))
    with pytest.raises(RuntimeError, match=f"linear_grad_input: weight has {limit + 1} in_features, more than"):
        linear_ext.linear_grad_input(*(torch.ones(s, device=device) for s in ((1, 1), (1, limit + 1))))


def test_header_and_code_agree():
    """The contract at the top of linear_ext.cu names every kernel and the tiles the code uses; the register-tiled
    kernel's are linear_ladder's version 7 at its default tiles; the binding's column limit is the grid's, and so is
    the fakes'."""
    header = CU.split("#include", 1)[0]
    kernels = set(re.findall(r"__global__ void (?:__launch_bounds__\(\w+\)\s*)?(\w+)", CU))
    assert kernels == {
        "linear_fwd_kernel",
        "linear_bwd_input_kernel",
        "linear_bwd_weight_kernel",
        "linear_bwd_bias_kernel",
        "linear_tiled_kernel",
    }
    assert all(f"({k})" in header for k in kernels), "the header names each kernel next to its formula"
    tile = constant("TILE")
    assert f"TILE x TILE ({tile} x {tile})" in header and f"{65535 * tile:,}" in header
    chunk = constant("BIAS_CHUNK")
    assert f"BIAS_CHUNK ({chunk}) rows of G" in header and f"past {chunk} rows, a second launch" in header
    fast = [constant(f"FAST_{name}") for name in ("BM", "BN", "BK", "TM", "TN")]
    spec = importlib.util.spec_from_file_location("linear_ladder_ops", helpers.KERNELS / "linear_ladder_ops.py")
    ladder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ladder)
    assert tuple(fast) == ladder.TILES[ladder.DEFAULT_TILES]
    bm, bn, bk, tm, tn = fast
    flat = re.sub(r"\s*\n//\s*", " ", header)
    assert f"FAST_MIN_BLOCKS ({constant('FAST_MIN_BLOCKS')}) blocks of {bm} x {bn}" in flat
    assert f"{bm} x {bn} outputs per block of {bm // tm * (bn // tn)} threads, each thread an {tm} x {tn}" in flat
    assert f"tiles of {bk} along the inner dimension" in flat
    binding = (helpers.KERNELS / "linear_binding.cpp").read_text()
    assert f"kMaxColumns = 65535 * {tile};" in binding and f"kBiasChunk = {chunk};" in binding
    assert f"MAX_COLUMNS = 65535 * {tile}\n" in (helpers.KERNELS / "linear_ops.py").read_text()


# ---------------------------------------------------------------------------------------------------------------
# ONNX: the dynamo exporter (torch.onnx.export(..., dynamo=True)) with a translation of the custom op.


def onnx_setup():
    """The custom-domain opset, with a schema for kp::MyLinear so that onnxscript and onnx.checker know it."""
    import onnx  # onnx, onnxscript and onnxruntime are in requirements.txt (`make setup`)
    import onnxscript
    from onnx.defs import OpSchema

    if not onnx.defs.has("MyLinear", 1, "kp"):
        onnx.defs.register_schema(
            OpSchema(
                "MyLinear",
                "kp",
                1,
                "Y = X·Wᵀ + b",
                inputs=[OpSchema.FormalParameter(n, "T") for n in ("X", "W", "b")],
                outputs=[OpSchema.FormalParameter("Y", "T")],
                type_constraints=[("T", ["tensor(float)", "tensor(double)"], "float32 or float64")],
            )
        )
    return onnx, onnxscript.values.Opset("kp", 1), onnxscript.opset20


class Regression(torch.nn.Module):
    def __init__(self, apply, weight, bias):
        super().__init__()
        self.apply_linear = apply
        self.weight, self.bias = torch.nn.Parameter(weight), torch.nn.Parameter(bias)

    def forward(self, x):
        return self.apply_linear(x, self.weight, self.bias)


def export(model, translation, example):
    return torch.onnx.export(
        model,
        (example,),
        dynamo=True,
        opset_version=20,
        input_names=["x"],
        output_names=["y"],
        dynamic_shapes=({0: torch.export.Dim("batch")},),
        custom_translation_table=translation,
        verbose=False,
    ).model_proto


def test_onnx_custom_domain_node_passes_the_checker(linear_ext, linear_fn):
    onnx, kp, _ = onnx_setup()
    model = Regression(linear_fn, torch.randn(3, 5), torch.randn(3)).eval()
    proto = export(model, {linear_ext.linear.default: lambda x, w, b: kp.MyLinear(x, w, b)}, torch.randn(4, 5))
    onnx.checker.check_model(proto, full_check=True)
    assert [(n.domain, n.op_type) for n in proto.graph.node] == [("kp", "MyLinear")]
    assert {(o.domain, o.version) for o in proto.opset_import} >= {("kp", 1)}
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail

    with pytest.raises(Fail, match="kp:MyLinear.* is not a registered function/op"):  # no kernel for it there
        ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def test_onnx_standard_export_runs_in_onnxruntime_and_matches_torch(linear_ext, linear_fn):
    onnx, _, op = onnx_setup()
    import onnxruntime as ort

    layer = torch.nn.Linear(53, 29)  # its initialisation
    model = Regression(linear_fn, layer.weight.detach(), layer.bias.detach()).eval()
    proto = export(model, {linear_ext.linear.default: lambda x, w, b: op.Gemm(x, w, b, transB=1)}, torch.randn(4, 53))
    onnx.checker.check_model(proto, full_check=True)
    assert [n.op_type for n in proto.graph.node] == ["Gemm"]
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 37):  # fresh inputs, of batch sizes the export did not see
        x = torch.randn(batch, 53)
        (y,) = session.run(None, {"x": x.cpu().numpy()})
        with torch.no_grad():
            torch.testing.assert_close(torch.from_numpy(y), model(x).cpu(), rtol=0, atol=1e-5)
