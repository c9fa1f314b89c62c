# RUN: tle-dump -p verify-protocol,verify-deadlock --print-ir --no-locations %S/inputs/ring3.py
# A ring of capacity 3 closed after N tiles: verified for every N >= 0 by the cutoff theorem; the
# kernel carries the proof's verdict (kind, scope, values checked, argument) and no errors.

# CHECK: kernel ring(x_ptr, out_ptr, N) num_warps=4 attrs {verdict = ProtocolVerdict(kind = 'proved', scope = 'every value of N (N >= 0)'

# CHECK-NOT: ProtocolError
# CHECK: partition consume
