"""Launching the TLE-Pipe MLA decode kernel (tle_kernels/mla_decode_pipe.py) on given tensors:
``launch_decode_pipe`` runs one decode step into outputs the caller allocated (one split: out and
lse; ``n_split > 1``: the splits' o_part / lse_part for tle_kernels/mla_decode_combine.py), and
``pipe_unsupported_reason`` says which head counts it cannot run. Both are the shared launcher of
mla_decode_launch.py (its ``launch_decode`` states the contract) bound to this kernel.
"""

from .mla_decode_launch import launcher

launch_decode_pipe, pipe_unsupported_reason = launcher("pipe")
