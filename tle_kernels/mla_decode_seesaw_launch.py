"""Launching the TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on given
tensors, with the TLE-Pipe decode launcher's contract, so tle_kernels/decode_api.py runs either
kernel the same way: ``launch_decode_seesaw`` runs one decode step into outputs the caller
allocated (one split: out and lse; ``n_split > 1``: the splits' o_part / lse_part for
tle_kernels/mla_decode_combine.py), and ``seesaw_unsupported_reason`` says which head counts it
cannot run. Both are the shared launcher of mla_decode_launch.py (its ``launch_decode`` states the
contract) bound to this kernel.
"""

from .mla_decode_launch import launcher

launch_decode_seesaw, seesaw_unsupported_reason = launcher("seesaw")
