"""Command line: python -m gemvlab {build, doctor, record, table, kernelbench, selftest, lab}."""

from __future__ import annotations

import argparse
import json
import sys


def torch_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def cmd_build(args) -> int:
    from ..measure import ceiling
    from ..stages import STAGES

    total = 0.0
    for st in STAGES + (ceiling.READ_CEILING,):
        built = st.build()
        total += built.seconds
        number = getattr(st, "number", 0)
        print(f"{number} {st.name}: {'loaded from cache' if built.cached else 'built'} in "
              f"{built.seconds:.1f} s ({built.arch})")
        for rule in (st.constraints() if number else ceiling.NEEDS):
            print(f"    needs: {rule}")
        for kernel, r in built.resources.items():
            sass = built.sass.get(kernel) if built.sass else None
            loads = ("LDG " + ", ".join(f"{n} x {w}-bit" for w, n in sorted(sass.global_loads.items()))
                     if sass else "SASS: no disassembler found")
            spills = f"{r.spill_store_bytes}/{r.spill_load_bytes} B spilled" if r.spills else "no spills"
            print(f"    {kernel:<22} {r.registers:>3} registers, {r.shared_bytes:>5} B static shared, "
                  f"{spills}; {loads}")
    print(f"total {total:.1f} s")
    return 0


def cmd_doctor(args) -> int:
    from .doctor import main

    return main()


def cmd_selftest(args) -> int:
    from .selftest import main

    return main()


def cmd_record(args) -> int:
    from ..results.record import record
    from ..results.studies import HEADLINE, SHAPES

    if args.decode:  # the decode study alone, added to a copy of a results file (the recorded one by default)
        from .. import results
        from ..results import decode

        if not torch_cuda():
            raise SystemExit("gemvlab record --decode needs a CUDA GPU")
        doc = results.load(args.file)
        if args.profiles_only:  # the profiles alone, added to the file's decode study
            doc["decode"]["profiles"] = decode.profiles()
            results.save(doc, args.out)
        else:
            decode.record(doc, save=lambda d: results.save(d, args.out))
        return 0
    if args.quick:  # a smoke test of the whole pipeline in about a minute; not a record to keep
        record(args.out, shapes=((1024, 4096), (4096, 4099), (1, 65536)), headline=(2048, 65536),
               pitfalls=not args.no_pitfalls, explorer=((16, 65536), (4096, 4096)), counters=False)
    else:
        record(args.out, shapes=SHAPES, headline=HEADLINE, pitfalls=not args.no_pitfalls)
    return 0


def cmd_table(args) -> int:
    import torch

    from .. import results
    from ..results.table import format_shapes, format_table, json_rows, shape_rows

    if args.decode:  # the decode study: recorded (a live one is `record --decode`)
        from ..results import decode

        doc = results.load(args.file)
        if args.bar:
            from ..results import decode_bar

            print(json.dumps(decode_bar.check(doc), indent=1) if args.json else decode_bar.format_bar(doc))
            return 0
        print(json.dumps(decode.rows(doc), indent=1) if args.json else decode.format_rows(doc))
        return 0
    if args.shapes:  # the shape sweep and the explorer grid: recorded (a live one is `record`)
        doc = results.load(args.file)
        print(json.dumps(shape_rows(doc), indent=1) if args.json else format_shapes(doc, kernels=None if args.all else
                                                                                    ("gemv", "torch.matmul", "read ceiling")))
        return 0
    if torch.cuda.is_available() and not args.recorded:
        from ..results.record import live_headline

        doc = live_headline()
    else:
        doc = results.load(args.file)
    if args.json:
        print(json.dumps(json_rows(doc), indent=1))
    else:
        print(format_table(doc))
    return 0


def cmd_kernelbench(args) -> int:
    from .kernelbench import main

    return main(args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gemvlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build every stage; print registers, spills and load widths")
    sub.add_parser("doctor", help="check GPU, driver, toolkit, ninja, architecture; name each fix")
    sub.add_parser("selftest", help="on a GPU: every dispatcher variant on small inputs against float64 "
                                    "(what the GPU tests run under compute-sanitizer)")
    rec = sub.add_parser("record", help="measure every stage on this GPU and write a results file")
    rec.add_argument("--out", default="gemvlab-record.json", help="where to write (default %(default)s)")
    rec.add_argument("--no-pitfalls", action="store_true", help="skip the pitfall demos")
    rec.add_argument("--quick", action="store_true", help="small shapes only: check the pipeline works")
    rec.add_argument("--decode", action="store_true", help="the decode study alone (bf16, fp16, several vectors), "
                     "added to a copy of --file (default: the recorded file)")
    rec.add_argument("--file", default=None, help="with --decode: the results file to add it to")
    rec.add_argument("--profiles-only", action="store_true", help="with --decode: only torch.matmul's kernels "
                     "(torch.profiler), added to the file's decode study")
    tab = sub.add_parser("table", help="the stage table: live on a GPU, recorded otherwise")
    tab.add_argument("--json", action="store_true", help="the headline rows as a JSON list")
    tab.add_argument("--recorded", action="store_true", help="show the recorded file even on a GPU")
    tab.add_argument("--file", default=None, help="a results file other than the recorded one")
    tab.add_argument("--shapes", action="store_true", help="one row per (shape, kernel) of the shape sweep and "
                                                           "the explorer grid: gemv, torch.matmul, the read ceiling")
    tab.add_argument("--all", action="store_true", help="with --shapes: the stages too")
    tab.add_argument("--decode", action="store_true", help="one row per (N, K, n, dtype, kernel) of the decode study")
    tab.add_argument("--bar", action="store_true", help="with --decode: one row per case, gemv against torch.matmul "
                                                        "and torch.compile (faster, tie or slower), and the decode bar's "
                                                        "verdict")
    kb = sub.add_parser("kernelbench", help="write a KernelBench level 1 problem 4 solution running a stage "
                                            "(to stdout), or --check one on a GPU")
    kb.add_argument("--stage", default="warp_shuffle", help="a stage name or 1 to 5 (default %(default)s)")
    kb.add_argument("--block", type=int, default=None, help="threads per block (default: the recorded best)")
    kb.add_argument("--variant", type=int, default=None, help="the stage's variant (default: the recorded best)")
    kb.add_argument("--check", metavar="SOLUTION.py", default=None,
                    help="on a GPU: check a solution file against torch.matmul and time both as KernelBench does")
    sub.add_parser("lab", help="trust the notebooks and open them in JupyterLab; options after `lab` go to "
                               "JupyterLab", add_help=False)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:  # everything after `lab` belongs to JupyterLab
        from .lab import main as lab_main

        return lab_main(argv[1:])
    args = parser.parse_args(argv)
    return {"build": cmd_build, "doctor": cmd_doctor, "record": cmd_record, "table": cmd_table,
            "kernelbench": cmd_kernelbench, "selftest": cmd_selftest}[args.command](args)
