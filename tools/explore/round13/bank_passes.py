"""Shared-memory passes per warp load in row_tiles' sum, counted from its indexing (no GPU; not
a measurement): for each warp, each step of the loop, the lanes' addresses in the tile, grouped
by bank (address % 32); a bank serves one distinct address per pass, so a load takes as many
passes as its busiest bank has distinct addresses. Averaged over the loads of one block, for
the rule's (rows per tile, lanes per row) at each K, with the row stride K, with and without the
rotation row_tiles.cu applies (row r starts at column r % K where the stride is even), and with
one not tried on the GPU (each row shifted so that the effective stride is an odd multiple of G).
Logged in bank-passes.txt.   python tools/explore/round13/bank_passes.py"""


def passes_per_load(K: int, G: int, rows: int, rotate) -> float:
    """rotate: False; True (row_tiles.cu: row r starts at r % K where the stride is even); or
    "odd": row r starts at r * c % K, c the least step that makes (stride + c) / G odd (untried)."""
    lda, total, loads = K, 0, 0
    c = next(c for c in range(2 * G) if (lda + c) % G == 0 and (lda + c) // G % 2 == 1)
    for w in range(rows * G // 32):
        seqs = []
        for t in range(32 * w, 32 * w + 32):
            row, lane = t // G, t % G
            start = (row * c) % K if rotate == "odd" else (row % K if rotate and lda % 2 == 0 else 0)
            k = lane + start
            k -= K if k >= K else 0
            seq = []
            for _ in range((K - lane + G - 1) // G):
                seq.append(row * lda + k)
                k += G
                k -= K if k >= K else 0
            seqs.append(seq)
        for m in range(max(len(s) for s in seqs)):
            banks = {}
            for a in {s[m] for s in seqs if m < len(s)}:
                banks.setdefault(a % 32, set()).add(a)
            total += max(len(v) for v in banks.values())
            loads += 1
    return total / loads


print("passes per warp load of the tile (1 = no bank conflict)")
for K, rows, G in ((8, 256, 1), (16, 256, 1), (17, 128, 1), (24, 128, 1), (32, 128, 1), (33, 64, 2), (45, 64, 2),
                   (50, 64, 2), (63, 64, 2), (64, 64, 2)):
    print(f"K = {K:2}, {rows} rows, G = {G}: without the rotation {passes_per_load(K, G, rows, False):5.2f}, "
          f"as row_tiles.cu does {passes_per_load(K, G, rows, True):5.2f}, "
          f"stride made an odd multiple of G (untried) {passes_per_load(K, G, rows, 'odd'):5.2f}")
