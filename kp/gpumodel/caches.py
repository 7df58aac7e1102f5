"""The GPU model's memory hierarchy: what the L1 of each SM and the one L2 leave for DRAM to move, from the addresses
the stand-in's sampled blocks touched (kernels/common/cuda_cpu_profile.h, "The memory hierarchy's inputs"). Sharing
(one launch's inputs, read from the profile's `hierarchy` rows) in; sectors out. Never times anything
(kp.gpumodel.gputime does) and never names a GPU: the L2's size and how many blocks are resident together come in as
numbers.

The rules, all sector-granular (32 bytes; CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"):
- L1, per SM: a block's loads of a sector it has already loaded hit its SM's L1 (the L1 caches global loads from
  compute capability 7.0 on: CUDA C++ Programming Guide, "Compute Capability 7.x: Global Memory"); so L2 serves each
  block's distinct sectors read (`l2_read_sectors`). Blocks that share an SM are taken not to share its L1, and an L1
  big enough for the sectors a block reuses (its reuse is taken to be close in time, as in a loop over tiles).
- L1 throughput: the L1 looks up one 128-byte line per clock per SM (a "wavefront" of Nsight Compute's Kernel
  Profiling Guide, "the maximum unit that can pass through a pipeline stage per cycle": a coalesced request of 32
  floats is 1, an uncoalesced one up to 32) and shares that data pipe with shared memory (`l1_wavefronts`).
- L2, one for the GPU: the blocks resident at one time (a wave: blocks per SM x SMs, dispatched in block order, x
  fastest) read each sector they share once: DRAM reads are each wave's distinct sectors. A sector shared between
  waves is read again by the next wave, unless the whole launch's footprint fits in the L2, in which case DRAM reads
  each sector once (the compulsory traffic). Writes reach DRAM once per distinct sector (write-back).
- Which sectors blocks share comes from the samples (a product grid of blocks, several along each grid dimension): a
  sector that sampled blocks at different x touched is shared along x, and so on; a class of sectors shared along a
  set of dimensions has, per sampled point of the other dimensions, the same count; the distinct sectors of any set
  of blocks are then, per class, that count x the distinct points the blocks project to on the other dimensions.
  Exact for tiles (a GEMM's row of A is shared along x, a column of B along y, a tile of C by no one); a halo touched
  by two neighbouring blocks that were not both sampled counts twice.
- Sharing the samples miss, bounded by each tensor's size: the blocks of any range can read no more distinct sectors
  of a tensor than it has (the stand-in reports each tensor's sectors and its classes apart), so a range's count of
  each tensor is the smaller of what its classes give and the tensor's sectors. The classes overshoot where blocks
  that no two samples stand for read the same sectors: the channels of an involution group read one weight at the
  same pixels, and 2-16 samples of 1024 blocks hold one channel a group, so every channel's weight reads counted as
  its own, 16 times the weight, charged to DRAM where the L2 serves 15 of 16. Over the whole grid, where the
  footprint fits the L2, the bound is the compulsory traffic; by waves it bounds a wave only where the wave's classes
  exceed the whole tensor (a wave that covers a share of the grid is left as its classes say: which blocks of a 1-D
  grid share a sector, the classes do not tell, with every block traced or not). A tensor whose classes come to its
  sectors or fewer (every tile sampled: GEMMs) is left as its classes say.
- So on a 1-D grid a class shared along x is charged to every wave: right where every block reads it (mul's broadcast
  operand, layernorm's gamma and beta: each wave reads it once), too high where the blocks of one wave share it and
  others do not (a weight the channels of an involution group read, every block traced), capped by the blocks' L1
  misses (tests/test_caches.py works both by hand); too low only where samples far apart share what other blocks
  share alike (the class is the samples' share, not scaled), which no 1-D kernel of kernels/ does at 16 samples.
  Charging a wave only the sectors its blocks read needs each sector's lowest and highest sampled x from the stand-in.
"""

import dataclasses

SECTOR_BYTES = 32


@dataclasses.dataclass(frozen=True)
class Sharing:
    """One launch's memory hierarchy inputs, as the profile reports them (every count already the whole grid's)."""

    grid: tuple  # (x, y, z) blocks
    samples: tuple  # sampled coordinates along x, y, z
    l1_wavefronts: int  # global requests' distinct 128-byte lines
    l2_read_sectors: int  # each block's distinct sectors read: its L1 misses
    barriers: int  # __syncthreads released, summed over the blocks
    reads: tuple  # per class (bit d of its index: shared along dimension d), sectors per sampled owner
    writes: tuple
    slowest_requests: int = 0  # per block, the global load requests of its warp that made the most, summed
    tensors: tuple = ()  # per tensor touched: (its sectors, its reads' classes, its writes' classes)

    def distinct(self, first, end, writes=False):
        """The distinct sectors the blocks of linear index first .. end - 1 read (or write): each tensor's at most its
        sectors."""
        count = self._classes(self.writes if writes else self.reads, first, end)
        for sectors, reads, written in self.tensors:
            count -= max(0.0, self._classes(written if writes else reads, first, end) - sectors)
        return count

    def _classes(self, classes, first, end):
        return sum(
            per_owner * _projections(first, end, self.grid, [d for d in range(3) if not along >> d & 1])
            for along, per_owner in enumerate(classes)
            if per_owner
        )


def parse_sharing(report, launches):
    """The profile report's `hierarchy` rows as one Sharing per launch (None where the report has none); `launches`:
    kp.gpumodel.counts' Launch records, in the report's order (for their grids)."""
    rows, tensors = {}, {}
    for row in report.splitlines():
        if not row.startswith("hierarchy"):  # not split: the report's 2^18 touch rows
            continue
        f = row.split("\t")
        if f[0] == "hierarchy" and len(f) == 9:
            rows[int(f[1])] = f
        elif f[0] == "hierarchy_tensor" and len(f) == 5:
            classes = tuple(tuple(float(v) for v in c.split()) for c in f[3:])
            tensors.setdefault(int(f[1]), []).append((int(f[2]), *classes))
    sharing = []
    for k, la in enumerate(launches):
        f = rows.get(k)
        if f is None:
            sharing.append(None)
            continue
        sharing.append(
            Sharing(
                grid=tuple(la.grid),
                samples=tuple(int(v) for v in f[2].split()),
                l1_wavefronts=int(f[3]),
                l2_read_sectors=int(f[4]),
                barriers=int(f[5]),
                slowest_requests=int(f[6]),
                reads=tuple(float(v) for v in f[7].split()),
                writes=tuple(float(v) for v in f[8].split()),
                tensors=tuple(tensors.get(k, ())),
            )
        )
    return sharing


def _projections(first, end, grid, dims):
    """How many distinct points the blocks of linear index first .. end - 1 of `grid` have on the dimensions `dims`
    (blocks are numbered x fastest). Exact but for (x, z) over several z-planes: an upper bound there."""
    gx, gy, _ = grid
    n = end - first
    rows = (end - 1) // gx - first // gx + 1  # distinct (y, z)
    planes = (end - 1) // (gx * gy) - first // (gx * gy) + 1  # distinct z
    return {
        (): 1,
        (0,): min(n, gx),
        (1,): min(rows, gy),
        (2,): planes,
        (0, 1): min(n, gx * gy),
        (0, 2): min(n, gx * planes),
        (1, 2): rows,
        (0, 1, 2): n,
    }[tuple(dims)]


@dataclasses.dataclass(frozen=True)
class Traffic:
    """Where one launch's global sectors come from and go to."""

    requested_read: int  # the sectors the loads asked for (L1 lookups at sector granularity)
    l2_read: int  # L1 misses
    dram_read: int
    dram_write: int
    footprint_fits_l2: bool

    def hit_shares(self):
        """(L1, L2, DRAM): the share of the requested sectors each serves."""
        if not self.requested_read:
            return 0.0, 0.0, 1.0
        dram = min(self.dram_read, self.requested_read) / self.requested_read
        l2 = max(0.0, min(self.l2_read, self.requested_read) / self.requested_read - dram)
        return max(0.0, 1.0 - l2 - dram), l2, dram


def traffic(sharing, requested_read, resident_blocks, l2_bytes):
    """The launch's Traffic on a GPU whose L2 has `l2_bytes`, with `resident_blocks` blocks resident at once."""
    gx, gy, gz = sharing.grid
    blocks = gx * gy * gz
    l2_read = min(sharing.l2_read_sectors, requested_read) if requested_read else sharing.l2_read_sectors
    total_read, total_write = sharing.distinct(0, blocks), sharing.distinct(0, blocks, writes=True)
    fits = (total_read + total_write) * SECTOR_BYTES <= l2_bytes
    if fits:
        dram_read = total_read
    else:
        wave = max(1, resident_blocks)
        dram_read = sum(sharing.distinct(first, min(first + wave, blocks)) for first in range(0, blocks, wave))
    dram_read = min(dram_read, l2_read) if l2_read else dram_read
    return Traffic(
        requested_read=requested_read,
        l2_read=l2_read,
        dram_read=round(dram_read),
        dram_write=round(total_write),
        footprint_fits_l2=fits,
    )


def local_miss_share(resident_threads, bytes_per_thread, l1_bytes):
    """The share of local-memory traffic (kp.gpumodel.local) that misses the L1 and goes to the L2: the resident
    threads' stacks, resident_threads x bytes_per_thread, against the L1 bytes they can have (its size less the
    shared memory carved out); what does not fit misses in proportion, 1 - l1_bytes / footprint (every stack word
    taken to be used alike, as a thread's loop over its own array uses it); 0 where it fits."""
    footprint = resident_threads * bytes_per_thread
    return max(0.0, 1.0 - max(0, l1_bytes) / footprint) if footprint > 0 else 0.0
