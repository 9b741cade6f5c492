"""Facts about a GPU that need no GPU to compute: its per-SM limits, occupancy, residency."""
