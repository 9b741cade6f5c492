"""Measurement: timing, accuracy, the read ceiling, memory latency, the cost of a call, the model,
and what torch.profiler and Nsight Compute report."""
