"""What the notebooks call, one function per kind of cell, live on a GPU and recorded otherwise.

    from gemvlab import workbook as nb
    ctx = nb.setup(upto=1)
    nb.predict_line(ctx, "naive")

The modules: context (setup, the two numbers, the model's inputs, pitfalls), source (code, diffs,
registers, SASS), model_cells (the model beside the measurement), stage_cells (tables), torch_cells (what torch.matmul
runs), dispatch_cells (the dispatcher per shape), sliders and plots. The pitfall demos are
gemvlab.pitfalls.
"""

from . import context, dispatch_cells, model_cells, sliders, source, stage_cells, torch_cells
from .context import Context, model_inputs, pitfall, setup, sm_limits, two_numbers
from .dispatch_cells import (
    dispatch_look_back,
    dispatch_misses,
    dispatch_table,
    explain_shape,
    overhead_table,
    which_kernel,
)
from .model_cells import bandwidth_points, best_prediction, l1_fit, look_back, predict_line, sweep_model
from .sliders import block_slider, shape_slider
from .source import build_report, loads_in_flight, sass_lines, show_diff, show_source
from .stage_cells import (
    correctness,
    occupancy_table,
    serial_vs_tree_sum,
    shapes_table,
    steps_table,
    sweep_table,
    table,
    warps_table,
)
from .torch_cells import counters, matmul_kernels, matmul_overhead

__all__ = [
    "Context",
    "bandwidth_points",
    "best_prediction",
    "block_slider",
    "build_report",
    "context",
    "correctness",
    "counters",
    "dispatch_cells",
    "dispatch_look_back",
    "dispatch_misses",
    "dispatch_table",
    "explain_shape",
    "l1_fit",
    "loads_in_flight",
    "look_back",
    "matmul_kernels",
    "matmul_overhead",
    "model_cells",
    "model_inputs",
    "occupancy_table",
    "overhead_table",
    "pitfall",
    "predict_line",
    "sass_lines",
    "serial_vs_tree_sum",
    "setup",
    "shape_slider",
    "shapes_table",
    "show_diff",
    "show_source",
    "sliders",
    "sm_limits",
    "source",
    "stage_cells",
    "steps_table",
    "sweep_model",
    "sweep_table",
    "table",
    "torch_cells",
    "two_numbers",
    "warps_table",
    "which_kernel",
]
