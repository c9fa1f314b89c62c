# RUN: tle-dump -p emit-gluon %S/schedule_wgmma.py
# The pipelined attention tile of schedule_wgmma.py as Gluon. A wait's deps name values the kernel
# never names by the tl.dot they come from ("result of body[5].body[1].value.lhs", "A operand of
# body[5].body[6].value"): emit-gluon prints the names the translator gave them (_acc3, _a4), in
# the deps and in the comment. The loop carries the P·V wgmma (its loop head declares `acc` and
# the register A operand `_a4`, from the loop's wgmma_carried).
# CHECK: def attend(
# CHECK: acc = warpgroup_mma_init(acc)  # in flight across the back-edge
# CHECK-NEXT: _a4 = gl.zeros([64, 64], gl.bfloat16, layout=L2)  # carried register A operand
# CHECK-NEXT: for t in range(NT):
# CHECK: _acc3 = warpgroup_mma(
# CHECK-NEXT: acc, _acc3, _a4 = warpgroup_mma_wait(0, deps=[acc, _acc3, _a4])  # _acc3 is read
# CHECK-NEXT: s = (_acc3 * qk_scale)
# CHECK: _a4 = gl.convert_layout(p.to(gl.bfloat16), L2)
# The delayed release of slot t - 1 waits for nothing: the P·V wgmma in flight reads slot t % 2,
# and the one of tile t - 1 retired where S was read.
# CHECK: if (t > 0):
# CHECK-NEXT: _kv_s6 = ((t - 1)) % 2
# CHECK-NEXT: mbarrier.arrive(kv_empty0.index(_kv_s6), count=1)
# CHECK-NEXT: acc, _a4 = warpgroup_mma_wait(0, deps=[acc, _a4])  # loop exit: wgmmas carried by the loop
# CHECK-NEXT: if (NT > 0):
# CHECK-NOT: warpgroup_mma_wait(
# CHECK: def attention_tile(
