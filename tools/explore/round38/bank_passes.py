"""Shared-memory passes per warp-wide read in row_tiles.cu's sum_row (its indexing: an even row
stride rotates each row's start column), at K = 33 to 48 with one lane per row (64 rows: 2 warps)
and two lanes per row (64 rows: 4 warps), the tile at offset 0 and a row stride of K. Session 18,
for the comment in row_tiles.cu. Output: round38/bank_passes.txt.

    python tools/explore/round38/bank_passes.py
"""
# shared-memory passes per warp-wide read in sum_row, as row_tiles.cu indexes (tile at offset 0, lda = K)
def passes(addrs):
    banks = {}
    for a in set(addrs):
        banks[a % 32] = banks.get(a % 32, 0) + 1
    return max(banks.values())
def run(K, G, warp_rows0):
    tot_t = tot_b = n = 0
    rows = [warp_rows0 + l // G for l in range(32)]
    lanes = [l % G for l in range(32)]
    count = max((K - lane + G - 1) // G for lane in range(G))
    for m in range(count):
        ta, ba = [], []
        for r, lane in zip(rows, lanes):
            cnt = (K - lane + G - 1) // G
            if m >= cnt: continue
            k = lane + (r % K if K % 2 == 0 else 0)
            if k >= K: k -= K
            for _ in range(m):
                k += G
                if k >= K: k -= K
            ta.append(r * K + k); ba.append(k)
        tot_t += passes(ta); tot_b += passes(ba); n += 1
    return tot_t / n, tot_b / n, n
for K in range(33, 49):
    g1 = [run(K, 1, w) for w in (0, 32)]
    g2 = [run(K, 2, w) for w in (0, 16, 32, 48)]
    a1 = sum(t for t, b, n in g1) / 2, sum(b for t, b, n in g1) / 2
    a2 = sum(t for t, b, n in g2) / 4, sum(b for t, b, n in g2) / 4
    # reads per row-sum per warp: G=1: K steps of 32 rows; G=2: ceil(K/2) steps of 16 rows
    print(f"K={K}: G=1 tile {a1[0]:.2f} B {a1[1]:.2f} passes/read, {K} reads per 32 rows; G=2 tile {a2[0]:.2f} B {a2[1]:.2f}, {2*((K+1)//2)} reads per 32 rows")
