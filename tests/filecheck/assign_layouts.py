# RUN: tle-dump -p assign-layouts --no-locations %repo/tle_kernels/examples/attention_tile.py
# assign-layouts (a lowering pass: tle-dump prints the IR after it) solves the register layout of
# every tensor value and writes it into the IR: each partition's layout table (its distinct
# layouts; per layout variable, the index of its layout; the converted operands), each tensor-valued
# op's `layout`, the stores that become cp.async gathers, how each pipe's fields are filled and the
# arrive unit and init count of its barrier arrays.

# The q and k/v fields are filled by cp.async gathers only: every thread of the loader arrives on
# the full barriers (128 arrivals), the empty barrier keeps one elected arrive per release.
# CHECK: pipe q capacity=1 one_shot
# CHECK: arrive_units = (ArriveUnit(barrier = 'q_full0', mode = 'thread', threads = 128, init_count = 128),)
# CHECK: fills = (FieldFill(field = 'q', cp_async = True, registers = False),)
# CHECK: pipe kv capacity=2
# CHECK: arrive_units = (ArriveUnit(barrier = 'kv_full0', mode = 'thread', threads = 128, init_count = 128), ArriveUnit(barrier = 'kv_empty0', mode = 'partition', threads = 128, init_count = 1))
# CHECK: fills = (FieldFill(field = 'k', cp_async = True, registers = False), FieldFill(field = 'v', cp_async = True, registers = False))
# The loader: default blocked layouts of its 4 warps; index vectors are slices of them.
# CHECK: partition loader default
# CHECK: layouts = LayoutTable(layouts = (Slice(dim = 1, parent = Blocked(size_per_thread = (1, 8), threads_per_warp = (4, 8), warps_per_cta = (4, 1), order = (1, 0))), Blocked(
# CHECK: tile = tl.arange(0, BN) attrs {layout = Slice(dim = 1, parent = Blocked(size_per_thread = (1, 8)
# CHECK: tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile)) attrs {cp_async = True}
# CHECK-NEXT: tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile)) attrs {cp_async = True}
# The consumer: the wgmma accumulator layout (4 warps, instr 16x64x16) anchors S and O; the row
# statistics are its dim-1 slice, so the softmax needs no layout conversion.
# CHECK: partition attend
# CHECK: layouts = LayoutTable(layouts = (Slice(dim = 1, parent = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))), NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16)), Slice(dim = 0, parent = NVMMADistributed(
# CHECK: converts = ())}
# CHECK: m_i = tl.full((BM,), -inf, tl.fp32) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16)))}
# CHECK: acc = tl.zeros((BM, D), tl.fp32) attrs {layout = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))}
# CHECK: s = tl.dot(
# CHECK: attrs {layout = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))} * qk_scale
# CHECK-NEXT: m_new = tl.maximum(m_i, tl.max(s, 1) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(
# CHECK: l_i = l_i * alpha + tl.sum(p, 1) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(
# CHECK: acc = tl.dot(p.to(tl.bf16) attrs {layout = NVMMADistributed(
