"""The source step of the CPU stand-in: turn a CUDA `.cu` file into C++ that g++ accepts.

The `.cu` on disk stays ordinary CUDA. `translate()` returns a copy that
  * starts with `#include "cuda_cpu.h"` and `#line 1 "<the .cu>"`, so compiler errors
    point at the original file and line;
  * rewrites every launch `kern<T><<<grid, block, shmem, stream>>>(args)` into
    `::kp::launch("kern<T>", (grid), (block), (shmem), (stream), [](auto... kp_args) { kern<T>(kp_args...); }, args)`,
    keeping every newline of the original so later lines keep their numbers;
  * rewrites `extern __shared__ T name[];` into a pointer to the running block's dynamic shared
    memory (a local inside a function, a macro at file scope);
  * passes a null pointer constant given as a launch argument (`NULL`, `0`) as one, which converts to the
    kernel's pointer (or integer) parameter as nvcc converts it;
  * in host code that declares its own `gridDim`, `blockDim`, `threadIdx` or `blockIdx` (a launcher's
    `dim3 gridDim(...)`), renames that variable, so that the stand-in's built-in variables do not break it;
  * passes the kernel's name to `cudaFuncSetAttribute` (the runtime keeps an opted-in dynamic shared memory
    size per kernel name);
  * points each `#include "header"` where `include` says (kp.standin.translate_tree: to the header's own
    translation, so that project and user headers are translated like the `.cu`);
  * drops the CUDA runtime includes that `cuda_cpu.h` stands in for, and spells `__noinline__`
    and `#pragma unroll` the way g++ understands them (and, for check mode, `__forceinline__` as `inline`: -O1
    cannot force the inlining of a function passed by pointer; not in a header);
  * for check mode (`check=True`), surrounds every `__shared__` declaration with two guard arrays and
    registers its variables with the runtime (`::kp::check_shared`): as the declaration runs, or, for
    file-scope ones, on the library's list that every kernel runs as it starts; and wraps the condition of
    every `if`, `while` and `for` of device code in `KP_BRANCH(...)`, for the GPU model's branch counts (not an
    `if constexpr`, a declaration as the condition, or a range-for).
Constructs the stand-in cannot honour are rejected here, before g++ runs, with
`file.cu:LINE: <construct> is not supported on the CPU stand-in`: the ones in UNSUPPORTED, and every
name of CUDA's device API (cuda_names.txt) that neither cuda_cpu.h defines nor the C math library has.
Code in a preprocessor branch the stand-in does not compile (`#if __CUDA_ARCH__ >= 800`, `#ifdef __CUDACC__`)
is not inspected: see inactive_branches.
"""

import ctypes
import ctypes.util
import functools
import re
from pathlib import Path

# (pattern, what the user reads). Matched against code with comments and strings blanked out.
UNSUPPORTED = [
    (r"\basm\b|\b__asm__\b|\b__asm\b", "inline asm/PTX"),
    (
        r"\btexture\s*<|\btex[123]D\w*\s*[<(]|\bsurf[123]D\w*\s*[<(]|\bcudaTextureObject_t\b|\bcudaSurfaceObject_t\b",
        "texture/surface memory",
    ),
    (r"\bwmma\s*::|<\s*mma\.h\s*>|\b__hmma\w*", "WMMA/tensor cores"),
    (r"\bcp\.async\b|\b__pipeline_\w+\s*\(|\bmemcpy_async\s*\(|\bcp_async\w*\s*\(", "cp.async"),
    (r"\bthis_grid\s*\(|\bgrid_group\b|\bcudaLaunchCooperativeKernel\w*\b", "grid-wide cooperative sync"),
]

CUDA_RUNTIME_INCLUDES = re.compile(  # and assert's (the header redefines it for kernels), cooperative groups'
    r'^[ \t]*#[ \t]*include[ \t]*[<"](cuda_runtime\.h|cuda_runtime_api\.h|cuda\.h|device_launch_parameters\.h'
    r'|cassert|assert\.h|cooperative_groups\.h|cooperative_groups/reduce\.h)[>"]',
    re.M,
)
FP16_INCLUDES = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](cuda_fp16\.h|cuda_bf16\.h)[>"]', re.M)
EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+(?P<type>[^;\[]*?)\s*\b(?P<name>\w+)\s*\[\s*\]\s*;")
ALIGN = re.compile(r"__align__\s*\(\s*\d+\s*\)|alignas\s*\(\s*\d+\s*\)")


class UnsupportedConstruct(Exception):
    """A construct of the `.cu` file that the CPU stand-in cannot run."""

    def __init__(self, path, line, construct):
        self.path, self.line, self.construct = path, line, construct
        super().__init__(f"{path}:{line}: {construct} is not supported on the CPU stand-in")


COMMENT_OR_QUOTE = re.compile(r"//|/\*|[\"']")


def blank_comments_and_strings(src):
    """Same length and newlines as `src`, with comments and string/char literals replaced by spaces.

    Scanning this copy finds code only; offsets into it are offsets into `src`.
    """
    pieces, i, n = [], 0, len(src)

    def blanked(a, b):
        return re.sub(r"[^\n]", " ", src[a:b])

    while i < n:
        m = COMMENT_OR_QUOTE.search(src, i)  # code up to there is kept as it is
        if not m:
            pieces.append(src[i:])
            break
        pieces.append(src[i : m.start()])
        i = m.start()
        if m[0] == "//":
            j = src.find("\n", i)
            j = n if j < 0 else j
            pieces.append(blanked(i, j))
        elif m[0] == "/*":
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            pieces.append(blanked(i, j))
        else:
            c, j = m[0], i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j, n)
            pieces.append(c + blanked(i + 1, j) + src[j : j + 1])  # keep the quotes, blank the contents
            j += 1
        i = j
    return "".join(pieces)


@functools.cache
def stand_in_names():
    """Every name the stand-in's headers define (cuda_cpu.h, its host runtime and its half types), comments aside."""
    here = Path(__file__).parent
    headers = ("cuda_cpu.h", "cuda_cpu_fp16.h", "cuda_cpu_host.h")
    return set().union(*(defined_names(blank_comments_and_strings((here / h).read_text())) for h in headers))


@functools.cache
def missing_cuda_names():
    """({names}, {headers}) of CUDA's device API (cuda_names.txt) that the stand-in does not provide: neither
    cuda_cpu.h's code (comments aside) nor the C math library (libm's exports) has them."""
    here = Path(__file__).parent
    listed = [line.strip() for line in (here / "cuda_names.txt").read_text().splitlines()]
    listed = [line for line in listed if line and not line.startswith("#")]
    provided = stand_in_names()
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    names = {n for n in listed if not n.startswith("<") and n not in provided and not hasattr(libm, n)}
    return names, {n[1:-1] for n in listed if n.startswith("<")}


def defined_names(code):
    """Every identifier in the C++ `code`, and those its macros paste together (`__fadd_##suffix` in a macro
    invoked as `KP_ROUNDED(rz, ...)` defines `__fadd_rz`)."""
    names = set(re.findall(r"\b\w+\b", code))
    for macro in re.finditer(r"#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:.*\\\n)*.*)", code):
        params = [p.strip() for p in macro[2].split(",")]
        if "##" not in macro[3]:
            continue
        for call in re.finditer(rf"^[ \t]*{macro[1]}\(([^)]*)\)", code, re.M):
            args = dict(zip(params, (a.strip() for a in call[1].split(","))))
            # Each parameter that touches a `##` takes its argument; then the pastes join (`P##2int_##sfx`).
            expanded = re.sub(
                r"\w+(?=\s*##)|(?<=##)\s*\w+", lambda m, args=args: args.get(m[0].strip(), m[0].strip()), macro[3]
            )
            names |= set(re.findall(r"\w+", re.sub(r"\s*##\s*", "", expanded)))
    return names


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def refuse_missing_cuda_names(src, code, shown):
    """Raise UnsupportedConstruct at the first include or use of a CUDA name the stand-in lacks."""
    names, headers = missing_cuda_names()
    found = [(m.start(), f"#include <{m[1]}>") for m in INCLUDE.finditer(src) if m[1] in headers]
    for m in re.finditer(r"\b[A-Za-z_]\w*\b", code):
        if m[0] in names and (
            m[0].startswith("__") or re.match(r"\s*\(", code[m.end() :]) or code[: m.start()].rstrip().endswith("::")
        ):
            found.append((m.start(), m[0]))
    if found:
        pos, name = min(found)
        raise UnsupportedConstruct(shown, line_of(src, pos), name)


def line_of(src, pos):
    return src.count("\n", 0, pos) + 1


def matching(code, open_pos):
    """Index of the bracket that closes the one at `open_pos` ((, [ or {), or -1."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for i in range(open_pos, len(code)):
        c = code[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return -1
            if not stack:
                return i
    return -1


def split_top_level(code, text, sep=","):
    """Split `text` (with blanked twin `code`) on separators outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def kernel_expr_start(code, end):
    """Start of the kernel expression ending just before `end` (the `<<<`): `ns::kern<T, 4>`."""
    i = end
    while i > 0 and code[i - 1] in " \t\n":
        i -= 1
    if i > 0 and code[i - 1] == ">":  # explicit template arguments
        depth = 0
        while i > 0:
            i -= 1
            if code[i] == ">":
                depth += 1
            elif code[i] == "<":
                depth -= 1
                if depth == 0:
                    break
    while i > 0 and (code[i - 1].isalnum() or code[i - 1] in "_:"):
        i -= 1
    return i


def function_bodies(code):
    """[(start, end, is_device_code)] for every function body at namespace scope.

    A `{` at namespace scope opens a function body when the declaration before it ends in `)`
    (possibly followed by qualifiers); device code is a body whose declaration says
    `__global__`, or `__device__` without `__host__`.
    """
    bodies, i, n = [], 0, len(code)
    decl_start = 0
    while i < n:
        c = code[i]
        if c in ";}":
            decl_start = i + 1
        elif c == "{":
            decl = code[decl_start:i]
            head = re.sub(r"\s+", " ", decl).strip()
            if re.search(r"\bnamespace\b|^extern\s*$|extern \"?\s*\"?\s*$", head) or re.search(
                r"\b(struct|class|union|enum)\b[^()]*$", head
            ):
                decl_start = i + 1  # a scope whose contents are still at namespace level
            else:
                close = matching(code, i)
                close = n - 1 if close < 0 else close
                if re.search(r"\)\s*(const|noexcept|override|final|->[^{]*|\s)*$", decl):
                    device = "__global__" in decl or ("__device__" in decl and "__host__" not in decl)
                    bodies.append((i, close, device))
                i, decl_start = close, close + 1
        i += 1
    return bodies


SHARED_DECLARATION = re.compile(r"(?<!extern)(?<!\w)(\s*)__shared__\b")


def shared_declarations(code):
    """[(start, end, [names])] of every `__shared__ T a[N], b;` statement (not `extern __shared__`) in `code`:
    from `__shared__` to its `;` included, with the variables it declares."""
    found = []
    for m in re.finditer(r"\b__shared__\b", code):
        if re.search(r"\bextern\s+$", code[: m.start()]):
            continue
        end = code.find(";", m.end())
        if end < 0:
            continue
        declarators = split_top_level(code[m.end() : end], code[m.end() : end])
        names = []
        for d in declarators:
            head = d.split("[", 1)[0].split("=", 1)[0]
            ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"__align__\s*\([^)]*\)|alignas\s*\([^)]*\)", "", head))
            if ids:
                names.append(ids[-1])
        found.append((m.start(), end + 1, names))
    return found


def check_mode_edits(code, bodies, tag=""):
    """The edits that register `__shared__` variables with check mode's runtime (see the module's docstring).
    Each declaration gets guards before and after it, on its own lines, so line numbers do not change. A file-scope
    one is followed by a `::kp::detail::file_shared` object that lists its registration for every kernel of the
    library to run as it starts: a header's variable is then registered by the kernels of the `.cu` that includes it
    as by its own. `tag` keeps the names apart between the files of one translation unit (a `.cu`, its headers)."""
    edits = []
    for k, (start, end, names) in enumerate(shared_declarations(code)):
        lo, hi = f"kp_guard_{tag}{k}_lo", f"kp_guard_{tag}{k}_hi"
        register = "".join(f' ::kp::check_shared({n}, "{n}", {lo}, {hi});' for n in names)
        inside = any(b_start < start < b_end for b_start, b_end, _ in bodies)
        if not inside:
            register = f" static ::kp::detail::file_shared kp_file_shared_{tag}{k}([] {{{register} }});"
        edits.append((start, start, f"static thread_local char {lo}[256]; "))
        edits.append((end, end, f" static thread_local char {hi}[256];" + register))
    for b_start, _, _ in bodies:
        decl = code[code.rfind(";", 0, b_start) + 1 : b_start]
        if "__global__" in decl:
            edits.append((b_start + 1, b_start + 1, " ::kp::detail::check_file_shared();"))
    return edits


BRANCH = re.compile(r"\b(if|while|for)\s*\(")
ASSIGNMENT = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)")
DECLARED = re.compile(r"\s*(?:const\s+)?[\w:<>,]+[\s*&]+\w+\s*")  # `int x` of `if (int x = f())`


def branch_edits(code, bodies):
    """Check mode: `KP_BRANCH(` and `)` around the condition of every `if`, `while` and `for` in device code
    (`code`: comments, strings and preprocessor lines blanked), so that the GPU model sees each lane's outcome."""
    edits = []
    for start, end, device in bodies:
        if not device:
            continue
        for m in BRANCH.finditer(code, start, end):
            open_paren = m.end() - 1
            close = matching(code, open_paren)
            if close < 0:
                continue
            begin, stop = open_paren + 1, close
            if m.group(1) == "for":
                parts = split_top_level(code[begin:close], code[begin:close], ";")
                if len(parts) != 3:  # a range-for
                    continue
                begin += len(parts[0]) + 1
                stop = begin + len(parts[1])
            condition = code[begin:stop]
            assignment = ASSIGNMENT.search(condition)
            if not condition.strip() or (assignment and DECLARED.fullmatch(condition[: assignment.start()])):
                continue
            edits += [(begin, begin, "KP_BRANCH("), (stop, stop, ")")]
    return edits


# What the stand-in's g++ build defines (kp.build's -DKP_CPU_STANDIN) and leaves undefined, for inactive_branches: no
# CUDA compiler, no device pass. Any other macro's state (the compiler's own, a header's) is unknown here.
PREDEFINED = {"KP_CPU_STANDIN": "1"}
UNDEFINED = {
    "__CUDA_ARCH__",
    "__CUDACC__",
    "__NVCC__",
    "__CUDACC_RTC__",
    "__CUDA_ARCH_LIST__",
    "__HIPCC__",
    "__HIP_DEVICE_COMPILE__",
    "__HIP_PLATFORM_AMD__",
    "_WIN32",
}
DIRECTIVE = re.compile(r"(?m)^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef)\b(.*)$")


def condition_value(condition, defined):
    """The value of an `#if` condition under `defined` ({macro: value}, None for undefined), or None when it
    names a macro whose state the stand-in cannot know here (one from an included header, say)."""
    unknown = False

    def defined_op(m):
        nonlocal unknown
        name = m.group(1) or m.group(2)
        if name not in defined:
            unknown = True
            return "0"
        return "0" if defined[name] is None else "1"

    text = re.sub(r"\bdefined\s*(?:\(\s*(\w+)\s*\)|(\w+))", defined_op, condition)

    def identifier(m):
        nonlocal unknown
        name = m.group(0)
        if name not in defined:
            unknown = True
            return "0"
        value = defined[name]
        if value is None:  # an undefined macro is 0 in #if, as the C preprocessor has it
            return "0"
        if not re.fullmatch(r"\d+[uUlL]*", value.strip()):
            unknown = True
            return "0"
        return value

    text = re.sub(r"\b[A-Za-z_]\w*\b", identifier, text)
    if unknown:
        return None
    text = re.sub(r"(\d+)[uUlL]+", r"\1", text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    if not re.fullmatch(r"[\d\s()<>=!+\-*/%andortn]*", text):
        return None
    try:
        return bool(eval(text, {"__builtins__": {}}))  # digits, comparisons and logic only (checked above)
    except Exception:
        return None


def inactive_branches(code):
    """[(start, end)] of the code the stand-in's g++ does not compile: the branches of `#if`/`#ifdef`/`#elif`/
    `#else` whose condition is known false on the stand-in (`__CUDA_ARCH__` and `__CUDACC__` are undefined,
    KP_CPU_STANDIN is defined, and so is whatever the file itself #defines), and those after a branch known
    taken. A condition on a macro from elsewhere counts as taken, so such code is still inspected. `code`: the
    source with comments and strings blanked."""
    defined = dict(PREDEFINED)
    defined.update({name: None for name in UNDEFINED})
    regions = []
    stack = []  # per open #if: [parent active, some branch taken for sure, this branch active, its start]
    active = True
    for m in DIRECTIVE.finditer(code):
        kind, rest = m.group(1), m.group(2).strip()
        if kind in ("define", "undef"):
            name = re.match(r"\w+", rest)
            if active and name and not rest[name.end() :].startswith("("):
                defined[name[0]] = rest[name.end() :].strip() or "1" if kind == "define" else None
            continue
        if kind in ("if", "ifdef", "ifndef"):
            if kind == "if":
                value = condition_value(rest, defined)
            else:
                name = rest.split()[0] if rest.split() else ""
                value = None if name not in defined else (defined[name] is not None) == (kind == "ifdef")
            branch = active and value is not False
            stack.append([active, active and value is True, branch, m.end()])
            if active and not branch:
                regions.append([m.end(), None])
            active = branch
            continue
        if not stack:
            continue
        top = stack[-1]
        if not top[2] and top[0]:
            regions[-1][1] = m.start()
        if kind in ("elif", "else"):
            value = True if kind == "else" else condition_value(rest, defined)
            branch = top[0] and not top[1] and value is not False
            top[1] = top[1] or (top[0] and value is True and branch)
            top[2] = branch
            if top[0] and not branch:
                regions.append([m.end(), None])
            active = branch
        else:  # endif
            stack.pop()
            active = top[0]
    return [(a, len(code) if b is None else b) for a, b in regions]


def blank_regions(code, regions):
    """`code` with the given [(start, end)] regions blanked (newlines kept)."""
    out = list(code)
    for a, b in regions:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


BUILTIN_VARIABLES = ("gridDim", "blockDim", "threadIdx", "blockIdx")


def host_variables(code, bodies):
    """[(start, end, {names})]: the host functions (neither `__device__` nor `__global__`, parameters included)
    that declare a variable of one of CUDA's built-in names (`dim3 gridDim(...)`, or a parameter). cuda_cpu.h
    defines the built-ins as macros, which would turn such a declaration into nonsense; nvcc has them only in
    device code. The source step renames these variables (kp_host_gridDim): see rename_host_variables."""
    found = []
    for start, end, _ in bodies:
        decl_start = max(code.rfind(c, 0, start) for c in ";}{") + 1
        decl = code[decl_start:start]
        if "__device__" in decl or "__global__" in decl:
            continue
        region = code[decl_start:end]
        names = set()
        for name in BUILTIN_VARIABLES:
            for m in re.finditer(rf"(\w+|[>&*\]])\s+{name}\s*[(){{=;,\[]", region):
                if m.group(1) not in ("return", "case", "throw", "else", "do", "sizeof", "new", "delete"):
                    names.add(name)
        if names:
            found.append((decl_start, end, names))
    return found


def rename_host_variables(text, names):
    """`text` with each of `names` (not a member: `.gridDim`, `->gridDim`) spelt kp_host_<name>."""
    for name in names:
        text = re.sub(rf"(?<![\w.>]){name}\b", f"kp_host_{name}", text)
    return text


NULL_CONSTANT = re.compile(r"\s*(NULL|0[xX]?0*[uUlL]*)\s*")


def launch_arguments(code, text):
    """The launch's arguments `text` (`code`: its blanked twin), with each null pointer constant (`NULL`, `0`)
    passed as one: through the launch's `auto` parameters NULL would arrive as a `long`, which no pointer
    parameter takes, where nvcc converts it to the kernel's parameter type."""
    if not text.strip():
        return text
    out, at = [], 0
    for part in split_top_level(code, code):
        m = NULL_CONSTANT.fullmatch(part)
        piece = text[at : at + len(part)]
        if m:
            piece = piece[: m.start(1)] + "::kp::detail::zero_literal{}" + piece[m.end(1) :]
        out.append(piece)
        at += len(part) + 1
    return ",".join(out)


def kernel_base_name(expr):
    """`ns::k<float, 4>` -> `k`: how the runtime names a kernel for cudaFuncSetAttribute (every instantiation of a
    template shares the attribute)."""
    expr = re.sub(r"\(\s*(const\s+)?void\s*\*\s*\)", "", expr)  # (void*)k
    expr = re.sub(r"^\s*(static_cast|reinterpret_cast)\s*<[^>]*>\s*\((.*)\)\s*$", r"\2", expr)
    expr = re.sub(r"[&()\s]", "", expr.split("<", 1)[0])
    return expr.rsplit("::", 1)[-1]


def func_attribute_edits(code, bodies):
    """`cudaFuncSetAttribute(k, ...)` in host code -> `::kp::func_set_attribute("k", k, ...)`."""
    edits = []
    for m in re.finditer(r"(?<![\w:])cudaFuncSetAttribute\s*\(", code):
        if any(start < m.start() < end and device for start, end, device in bodies):
            continue
        close = matching(code, m.end() - 1)
        if close < 0:
            continue
        first = split_top_level(code[m.end() : close], code[m.end() : close])[0]
        edits.append((m.start(), m.end(), f'::kp::func_set_attribute("{kernel_base_name(first)}", '))
    return edits


def translate(src, path, display_path=None, check=False, include=None, header=False, tag=""):
    """Return the g++-ready copy of the CUDA source `src` read from `path`.

    `display_path` is how errors name the file (defaults to `path`); `check`: for a check-mode build.
    `include(name)`: where the copy includes the header that `src` includes as `#include "name"` from (its own
    translation, say), or None to leave that line as it is; asked only of includes that g++ compiles.
    `header`: `src` is a header, whose copy does not include cuda_cpu.h first (the `.cu`'s copy did) and keeps its
    `__forceinline__` in check mode;
    `tag`: what keeps the names check mode adds apart between the files of one translation unit.
    """
    shown = display_path or path
    code = blank_comments_and_strings(src)
    preprocessor_free = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group()), code)

    inactive = inactive_branches(code)
    compiled = blank_regions(code, inactive)  # what g++ compiles, for the refusals
    for pattern, what in UNSUPPORTED:
        m = re.search(pattern, compiled)
        if m:
            raise UnsupportedConstruct(shown, line_of(src, m.start()), what)
    refuse_missing_cuda_names(blank_regions(src, inactive), compiled, shown)

    bodies = function_bodies(preprocessor_free)

    def enclosing_body(pos):
        for start, end, device in bodies:
            if start < pos < end:
                return device
        return None  # namespace scope

    edits = []  # (start, end, replacement), applied back to front
    renamed = host_variables(preprocessor_free, bodies)
    launches = []  # their spans: a rename inside one is made in its replacement

    for m in re.finditer(r"<<<", code):
        launch = m.start()
        if enclosing_body(launch):
            raise UnsupportedConstruct(shown, line_of(src, launch), "launching kernels from kernels")
        close_cfg = code.find(">>>", launch + 3)
        paren = close_cfg + 3
        while paren < len(code) and code[paren] in " \t\n":
            paren += 1
        close_args = matching(code, paren) if paren < len(code) and code[paren] == "(" else -1
        if close_cfg < 0 or close_args < 0:
            raise UnsupportedConstruct(shown, line_of(src, launch), "a kernel launch this translator cannot parse")
        start = kernel_expr_start(code, launch)
        kernel = re.sub(r"\s+", " ", src[start:launch]).strip()
        config = split_top_level(code[launch + 3 : close_cfg], src[launch + 3 : close_cfg])
        if not 2 <= len(config) <= 4 or not all(c.strip() for c in config):
            raise UnsupportedConstruct(
                shown, line_of(src, launch), "a launch configuration other than <<<grid, block[, shmem[, stream]]>>>"
            )
        config += ["0", "nullptr"][len(config) - 2 :]
        args = launch_arguments(code[paren + 1 : close_args], src[paren + 1 : close_args])
        for b_start, b_end, names in renamed:
            if b_start <= launch < b_end:
                config = [rename_host_variables(c, names) for c in config]
                args = rename_host_variables(args, names)
        # Newlines between the kernel name and the argument list are kept, so line numbers hold.
        gap = src[start:paren].count("\n") - src[launch + 3 : close_cfg].count("\n")
        cfg = ", ".join(f"({c})" if c.strip() else c for c in config)
        name = '"' + kernel + '"'
        comma = ", " if args.strip() else ""
        replacement = (
            f"::kp::launch({name}, {cfg}, [](auto... kp_args) {{ {kernel}(kp_args...); }}{comma}"
            + "\n" * gap
            + f"{args})"
        )
        edits.append((start, close_args + 1, replacement))
        launches.append((start, close_args + 1))

    for b_start, b_end, names in renamed:
        for name in names:
            for m in re.finditer(rf"(?<![\w.>]){name}\b", preprocessor_free[b_start:b_end]):
                at = b_start + m.start()
                if not any(a <= at < b for a, b in launches):
                    edits.append((at, at + len(name), f"kp_host_{name}"))
    edits += func_attribute_edits(preprocessor_free, bodies)

    for m in EXTERN_SHARED.finditer(code):
        ctype = ALIGN.sub("", src[m.start("type") : m.end("type")]).strip()
        name = m.group("name")
        memory = f'reinterpret_cast<{ctype}*>(::kp::dynamic_shared_memory("{name}", sizeof({ctype})))'
        if enclosing_body(m.start()) is None:
            replacement = f"\n#define {name} ({memory})\n"
        else:
            replacement = f"{ctype}* const {name} = {memory};"
        edits.append((m.start(), m.end(), replacement))

    if check:
        edits += check_mode_edits(preprocessor_free, bodies, tag) + branch_edits(preprocessor_free, bodies)

    # g++ ignores nvcc's `#pragma unroll [N]`; its own spelling takes a count (8 when none is given).
    for m in re.finditer(r"(?m)^[ \t]*#[ \t]*pragma[ \t]+unroll\b[ \t]*\(?[ \t]*(\d*)[ \t]*\)?", code):
        edits.append((m.start(), m.end(), f"#pragma GCC unroll {m.group(1) or 8}"))

    # A `__noinline__` macro would break libstdc++'s own `__attribute__((__noinline__))`.
    for m in re.finditer(r"\b__noinline__\b", code):
        edits.append((m.start(), m.end(), "__attribute__((noinline))"))
    # Check builds (-O1) cannot force the inlining of a function passed by pointer (cg::reduce's operation): g++
    # fails the build ("inlining failed in call to 'always_inline'"), where nvcc inlines it. `inline` lets g++ choose.
    # Not in a header: its helpers stay inlined into the `.cu`'s kernels, whose lines check mode and the GPU model
    # name for them (kp.diagnostics.code_lines), as before headers were translated.
    if check and not header:
        for m in re.finditer(r"\b__forceinline__\b", code):
            edits.append((m.start(), m.end(), "inline"))

    for m in CUDA_RUNTIME_INCLUDES.finditer(src):
        edits.append((m.start(), m.end(), f"/* {m.group(1)}: provided by cuda_cpu.h */"))
    for m in FP16_INCLUDES.finditer(src):
        edits.append((m.start(), m.end(), f'#include "cuda_cpu_fp16.h" /* for {m.group(1)} */'))
    rewritten = {m.start() for m in (*CUDA_RUNTIME_INCLUDES.finditer(src), *FP16_INCLUDES.finditer(src))}
    for m in QUOTED_INCLUDE.finditer(src) if include else ():
        live = re.match(r"[ \t]*#", code[m.start() :]) and not any(a <= m.start() < b for a, b in inactive)
        if live and m.start() not in rewritten and (target := include(m[1])) is not None:
            edits.append((m.start(1), m.end(1), target))

    out = src
    for start, end, replacement in sorted(edits, reverse=True):
        if replacement.startswith("\n#define"):
            # A file-scope macro needs its own line; restore the numbering right after it.
            replacement += f'#line {line_of(src, end)} "{path}"\n'
            replacement = replacement[1:] if start == 0 or out[start - 1] == "\n" else replacement
        out = out[:start] + replacement + out[end:]
    return ("" if header else '#include "cuda_cpu.h"\n') + f'#line 1 "{path}"\n' + out
