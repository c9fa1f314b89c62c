# RUN: tle-dump -p emit-gluon %S/inputs/wgmma_placement.py
# emit-gluon prints each wgmma wait schedule-wgmma wrote (tests/filecheck/
# schedule_wgmma_placement.py shows the attributes) at its point: after the line that computes the
# value it follows, before the statement it precedes, at the end of the block it ends. The deps
# are the partition's names; the comment is the attribute's `why`.
# CHECK: def attend(
# CHECK: acc = _acc1
# CHECK-NEXT: acc = warpgroup_mma_wait(0, deps=[acc])  # loop entry: no wgmma in flight across a loop boundary
# CHECK-NEXT: for t in range(NT):
# CHECK: s = _acc4
# CHECK-NEXT: s = warpgroup_mma_wait(0, deps=[s])  # s is read
# CHECK-NEXT: acc = (acc + s)
# CHECK-NEXT: if (t > 0):
# CHECK: acc = _acc7
# CHECK-NEXT: acc = warpgroup_mma_wait(0, deps=[acc])  # end of the if branch
# The release needs no wait of its own.
# CHECK-NEXT: _kv_s8 = (t) % 2
# CHECK-NEXT: mbarrier.arrive(kv_empty0.index(_kv_s8), count=1)
# CHECK: acc = _acc9
# CHECK-NEXT: acc = warpgroup_mma_wait(0, deps=[acc])  # loop back-edge
# CHECK-NEXT: _tle_store_acc(
# CHECK: last = _acc10
# CHECK-NEXT: last = warpgroup_mma_wait(0, deps=[last])  # end of the partition
# CHECK-NOT: warpgroup_mma_wait(
# CHECK: def placement(
