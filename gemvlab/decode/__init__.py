"""The GEMV of LLM decode: W (N x K) in bfloat16, float16 or float32 times 1 to 16 vectors.

gemvlab.gemv(W, B) comes here when W or B is not float32 or B holds several vectors (float32
with one vector stays with gemvlab.dispatch). Two kernels: decode_mma.cu (bf16 and fp16 on
tensor cores, sm_80 and later) and decode_cores.cu (float32, and halves before sm_80, on CUDA
cores). The rule (rule.py) picks the kernel and its launch; gemvlab.explain prints why.

    plan, strides = plan_for(W, B)     # the rule's plan for these tensors (CPU tensors too)
    print(plan.describe())
"""

from .kernels import CORES, KERNELS, MMA
from .launch import explain, launcher, make_launch, plan_for, run, takes
from .rule import DecodePlan, choose

__all__ = ["CORES", "KERNELS", "MMA", "DecodePlan", "choose", "explain", "launcher", "make_launch", "plan_for",
           "run", "takes"]
