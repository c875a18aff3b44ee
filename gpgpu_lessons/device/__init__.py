"""Device functions and small kernels that several lessons share: one home for each.

- `index`: `at` (an index made unsigned) and `clamp` (clamp-to-edge);
- `warp`: `FULL_MASK` and `warp_sum` (a sum over the 32 lanes of a warp with shuffles);
- `fill`: `zero_fill`, the kernel that clears a device array of any shape;
- `copy`: `copy_one_per_thread`, the plain copy lessons 00 and 01 show;
- `tree`: `tree_sum`, a block's sum in shared memory by halving (the fast sums' last step);
- `handover`: `add_and_hand_over`, a sum over blocks in one launch (the last block writes it);
- `vector`: `load_vector` / `store_vector`, several neighbouring elements as one 8- or 16-byte
  memory instruction on a GPU (plain indexing in the simulator).
"""
